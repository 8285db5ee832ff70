# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Which runs of a raw BIDS dataset the BIDS App takes, and their metadata.

The tree is walked directly (no pybids: a BIDS App's search is a few folder levels deep, and an index of the whole
dataset would cost more than the search): ``sub-<label>/[ses-<label>/]<datatype>/`` holds the runs, a run being a
NIfTI file whose name ends in the datatype's suffix (``_dwi`` for dwi, ``_bold`` for func). Its JSON sidecar, .bval
and .bvec are found by BIDS's inheritance principle: the files of the same suffix whose entities are a subset of
the run's, from the dataset's top level down to the run's folder, the nearest one winning (JSON fields merge, the
nearer overriding). Anatomical images and every other datatype are never looked at."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

#: The datatypes the App denoises, and the suffix of the runs it takes in each.
RUN_SUFFIXES: Dict[str, str] = {"dwi": "dwi", "func": "bold"}
#: The datatypes taken when none is asked for.
DEFAULT_DATATYPES: Tuple[str, ...] = ("dwi",)

_NIFTI_EXTENSIONS = (".nii.gz", ".nii")
_ENTITY = re.compile(r"^([a-zA-Z0-9]+)-([a-zA-Z0-9]+)$")


@dataclass(frozen=True)
class Run:
    """One raw series: its file, its entities in file-name order, and what BIDS inheritance gives it."""

    path: str
    #: The path under the dataset's root, with "/" (sub-01/ses-1/dwi/sub-01_ses-1_dwi.nii.gz).
    relative: str
    datatype: str
    suffix: str
    #: (key, label) pairs in the order the file name gives them: (("sub", "01"), ("ses", "1"), ("acq", "b1000")).
    entities: Tuple[Tuple[str, str], ...]
    #: The merged JSON sidecar(s) (empty when there are none).
    metadata: Dict[str, object] = field(default_factory=dict, compare=False, hash=False)
    bval: Optional[str] = None
    bvec: Optional[str] = None
    #: A multi-echo run's further echoes (echo-2, echo-3...), denoised jointly with this one, its first echo.
    echoes: Tuple["Run", ...] = field(default=(), compare=False, hash=False)

    @property
    def subject(self) -> str:
        return dict(self.entities)["sub"]

    @property
    def session(self) -> Optional[str]:
        return dict(self.entities).get("ses")

    @property
    def stem(self) -> str:
        """The file name's entities, without suffix and extension (sub-01_ses-1_acq-b1000)."""
        return "_".join(f"{key}-{label}" for key, label in self.entities)


def parse_name(name: str) -> Optional[Tuple[Tuple[Tuple[str, str], ...], str, str]]:
    """(entities, suffix, extension) of a BIDS file name, or None for a name that is not one."""
    extension = next((e for e in _NIFTI_EXTENSIONS + (".json", ".bval", ".bvec") if name.endswith(e)), None)
    if extension is None:
        return None
    parts = name[: -len(extension)].split("_")  # a top-level "dwi.json" has a suffix and no entity
    entities = []
    for part in parts[:-1]:
        match = _ENTITY.match(part)
        if match is None:
            return None
        entities.append((match.group(1), match.group(2)))
    suffix = parts[-1]
    if not suffix.isalnum():
        return None
    return tuple(entities), suffix, extension


def strip_label(label: str, key: str) -> str:
    """A participant or session label as BIDS Apps accept it: with or without its "sub-"/"ses-" prefix."""
    return label[len(key) + 1:] if label.startswith(key + "-") else label


def _subject_folders(bids_dir: str, participant_labels: Optional[Sequence[str]]) -> List[str]:
    present = sorted(n for n in os.listdir(bids_dir) if n.startswith("sub-") and
                     os.path.isdir(os.path.join(bids_dir, n)))
    if not participant_labels:
        return present
    wanted = [f"sub-{strip_label(label, 'sub')}" for label in participant_labels]
    missing = [w for w in wanted if w not in present]
    if missing:
        raise LookupError(f"no participant {', '.join(missing)} in '{bids_dir}' (it holds {len(present)}: "
                          f"{', '.join(present[:8])}{', ...' if len(present) > 8 else ''})")
    return sorted(set(wanted))


def _datatype_folders(subject_dir: str, session_labels: Optional[Sequence[str]],
                      datatypes: Sequence[str]) -> Iterable[Tuple[str, List[str]]]:
    """(folder, [the folders above it that inheritance reads]) for each datatype folder of one subject."""
    sessions = sorted(n for n in os.listdir(subject_dir) if n.startswith("ses-") and
                      os.path.isdir(os.path.join(subject_dir, n)))
    if sessions:
        wanted = {f"ses-{strip_label(s, 'ses')}" for s in session_labels} if session_labels else None
        levels = [([subject_dir, os.path.join(subject_dir, s)]) for s in sessions if wanted is None or s in wanted]
    else:
        levels = [[subject_dir]] if not session_labels else []  # a session filter excludes a subject without any
    for above in levels:
        for datatype in datatypes:
            folder = os.path.join(above[-1], datatype)
            if os.path.isdir(folder):
                yield folder, above


def _inherited(run_entities: Tuple[Tuple[str, str], ...], suffix: str, extension: str,
               folders: Sequence[str]) -> List[str]:
    """The files of ``extension`` that apply to a run, from the farthest (the dataset's top) to the nearest."""
    applying = []
    run_set = set(run_entities)
    for depth, folder in enumerate(folders):
        for name in sorted(os.listdir(folder)):
            parsed = parse_name(name)
            if parsed is None or parsed[1] != suffix or parsed[2] != extension:
                continue
            if set(parsed[0]) <= run_set:
                applying.append((depth, len(parsed[0]), os.path.join(folder, name)))
    # Nearer folders override farther ones; within a folder, the file with more entities is the more specific.
    return [path for _, _, path in sorted(applying)]


def _metadata(paths: Sequence[str]) -> Dict[str, object]:
    merged: Dict[str, object] = {}
    for path in paths:
        with open(path, encoding="utf-8") as sidecar:
            merged.update(json.load(sidecar))
    return merged


def _echo_number(run: Run) -> Optional[int]:
    label = dict(run.entities).get("echo")
    return int(label) if label is not None and label.isdigit() else None


def group_echoes(runs: Sequence[Run]) -> List[Run]:
    """The runs with the echoes of each multi-echo run gathered into its first echo (:attr:`Run.echoes`): runs of
    one folder whose names differ only in a numeric ``echo`` entity, two or more of them, ordered by echo number.
    The denoiser takes them as one series (a 5D series, echo after echo); every other run is left as it is."""
    groups: Dict[Tuple[str, str, Tuple[Tuple[str, str], ...]], List[Run]] = {}
    for run in runs:
        if _echo_number(run) is not None:
            key = (os.path.dirname(run.path), run.suffix, tuple(e for e in run.entities if e[0] != "echo"))
            groups.setdefault(key, []).append(run)
    grouped: Dict[str, Run] = {}
    members = set()
    for echoes in groups.values():
        if len(echoes) < 2:
            continue
        echoes.sort(key=_echo_number)
        grouped[echoes[0].path] = replace(echoes[0], echoes=tuple(echoes[1:]))
        members.update(run.path for run in echoes[1:])
    return [grouped.get(run.path, run) for run in runs if run.path not in members]


def find_runs(
    bids_dir: str,
    *,
    participant_labels: Optional[Sequence[str]] = None,
    session_labels: Optional[Sequence[str]] = None,
    datatypes: Sequence[str] = DEFAULT_DATATYPES,
) -> List[Run]:
    """Every run of ``datatypes`` (dwi; func's bold runs) under ``bids_dir``, in path order, the echoes of a
    multi-echo run gathered into its first (:func:`group_echoes`).

    ``participant_labels`` and ``session_labels`` (with or without their "sub-"/"ses-" prefix) narrow the search;
    a participant label that names no subject raises LookupError. A sidecar that is not valid JSON raises
    ValueError naming it."""
    unknown = [d for d in datatypes if d not in RUN_SUFFIXES]
    if unknown:
        raise ValueError(f"datatype {', '.join(unknown)} is not one the App denoises ({', '.join(RUN_SUFFIXES)})")
    if not os.path.isdir(bids_dir):
        raise FileNotFoundError(f"'{bids_dir}' is not a folder")
    bids_dir = os.path.abspath(bids_dir)
    runs = []
    for subject in _subject_folders(bids_dir, participant_labels):
        for folder, above in _datatype_folders(os.path.join(bids_dir, subject), session_labels, datatypes):
            datatype = os.path.basename(folder)
            suffix = RUN_SUFFIXES[datatype]
            for name in sorted(os.listdir(folder)):
                parsed = parse_name(name)
                if parsed is None or parsed[1] != suffix or parsed[2] not in _NIFTI_EXTENSIONS:
                    continue
                entities = parsed[0]
                if not entities or entities[0][0] != "sub":
                    continue
                path = os.path.join(folder, name)
                inheritance = [bids_dir] + above + [folder]
                try:
                    metadata = _metadata(_inherited(entities, suffix, ".json", inheritance))
                except ValueError as error:
                    raise ValueError(f"a sidecar of '{path}' is not valid JSON: {error}") from error
                bval = _inherited(entities, suffix, ".bval", inheritance)
                bvec = _inherited(entities, suffix, ".bvec", inheritance)
                runs.append(Run(path=path, relative=os.path.relpath(path, bids_dir).replace(os.sep, "/"),
                                datatype=datatype, suffix=suffix, entities=entities, metadata=metadata,
                                bval=bval[-1] if bval else None, bvec=bvec[-1] if bvec else None))
    return group_echoes(runs)
