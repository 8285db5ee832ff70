#!/usr/bin/env python3
"""Decodes DICOM files independently of DCMTK and GDCM, for the tests' references.

For each FILE, writes OUT/<name>.f64 (the pixels of the first frame with RescaleSlope/Intercept applied,
float64 little-endian, row-major) and OUT/<name>.txt (rows, columns, geometry and the decoder, KEY=VALUE).
pydicom parses the file; compressed pixel data is decoded by the pylibjpeg plugins (OpenJPEG for JPEG 2000,
Thomas Richter's libjpeg for JPEG and JPEG-LS): none of them is the library the I/O code uses for that
syntax (DCMTK's IJG/CharLS, GDCM's OpenJPEG wrapper).

usage: decode-reference.py OUT FILE...
"""
import os
import sys

import numpy as np
import pydicom
from pydicom.pixels import apply_rescale


def decode(path, out):
    ds = pydicom.dcmread(path)
    syntax = ds.file_meta.TransferSyntaxUID
    options = {}
    if syntax.is_compressed and syntax != pydicom.uid.RLELossless:
        options["decoding_plugin"] = "pylibjpeg"
    ds.pixel_array_options(**options)
    stored = ds.pixel_array
    if stored.ndim > 2:
        stored = stored[0]
    values = apply_rescale(stored, ds).astype(np.float64)
    name = os.path.splitext(os.path.basename(path))[0]
    values.astype("<f8").tofile(os.path.join(out, name + ".f64"))
    lines = {
        "rows": ds.Rows,
        "columns": ds.Columns,
        "transfer_syntax": str(syntax),
        "decoder": options.get("decoding_plugin", "pydicom"),
    }
    for key, keyword in (("position", "ImagePositionPatient"), ("orientation", "ImageOrientationPatient"),
                         ("pixel_spacing", "PixelSpacing")):
        if keyword in ds:
            lines[key] = " ".join(repr(float(v)) for v in ds[keyword].value)
    with open(os.path.join(out, name + ".txt"), "w") as text:
        for key, value in lines.items():
            text.write(f"{key}={value}\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        decode(path, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
