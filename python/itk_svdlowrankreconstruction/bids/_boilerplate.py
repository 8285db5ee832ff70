# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The methods paragraph a paper can take, with the references its options call for (OUTPUT_DIR/logs/CITATION.md)."""

from __future__ import annotations

from typing import List

from .. import _engine
from .._nifti_series import DenoiseOptions

_REFERENCES = {
    "veraart2016": "Veraart J, Novikov DS, Christiaens D, Ades-Aron B, Sijbers J, Fieremans E. Denoising of diffusion "
                   "MRI using random matrix theory. NeuroImage. 2016;142:394-406. doi:10.1016/j.neuroimage.2016.08.016",
    "cordero2019": "Cordero-Grande L, Christiaens D, Hutter J, Price AN, Hajnal JV. Complex diffusion-weighted image "
                   "estimation via matrix recovery under general noise models. NeuroImage. 2019;200:391-404. "
                   "doi:10.1016/j.neuroimage.2019.06.039",
    "gavish2014": "Gavish M, Donoho DL. The optimal hard threshold for singular values is 4/sqrt(3). IEEE Trans Inf "
                  "Theory. 2014;60(8):5040-5053. doi:10.1109/TIT.2014.2323359",
    "gavish2017": "Gavish M, Donoho DL. Optimal shrinkage of singular values. IEEE Trans Inf Theory. "
                  "2017;63(4):2137-2152. doi:10.1109/TIT.2017.2653801",
    "mccormick2014": "McCormick M, Liu X, Jomier J, Marion C, Ibanez L. ITK: enabling reproducible research and open "
                     "science. Front Neuroinform. 2014;8:13. doi:10.3389/fninf.2014.00013",
    "foi2011": "Foi A. Noise estimation and removal in MR imaging: the variance-stabilization approach. In: 2011 IEEE "
               "International Symposium on Biomedical Imaging: From Nano to Macro. 2011:1809-1814",
    "koay2006": "Koay CG, Basser PJ. Analytically exact correction scheme for signal extraction from noisy magnitude MR "
                "signals. J Magn Reson. 2006;179(2):317-322",
    "manjon2013": "Manjón JV, Coupé P, Concha L, Buades A, Collins DL, Robles M. Diffusion weighted image denoising "
                  "using overcomplete local PCA. PLoS One. 2013;8(9):e73021. doi:10.1371/journal.pone.0073021",
}


def _rank_sentence(options: DenoiseOptions, cite: List[str]) -> str:
    policy = options.policy_used()
    if options.noise_sigma is not None and policy in ("mp", "mp-cg"):
        cite.append("veraart2016")
        return (f"each patch kept the singular values above the upper edge of the Marchenko-Pastur distribution "
                f"[veraart2016] for the known noise level sigma = {options.noise_sigma:g}")
    if policy == "mp":
        cite.append("veraart2016")
        return ("the noise level and the number of signal components of each patch were estimated from the "
                "Marchenko-Pastur distribution of its eigenvalues (MP-PCA) [veraart2016]")
    if policy == "mp-cg":
        cite.extend(["veraart2016", "cordero2019"])
        return ("the number of signal components of each patch was chosen from the Marchenko-Pastur distribution "
                "of its eigenvalues [veraart2016], with the noise level estimated as Cordero-Grande et al. "
                "proposed [cordero2019]")
    if policy == "gd":
        cite.append("gavish2014")
        return "each patch kept the singular values above Gavish and Donoho's optimal hard threshold [gavish2014]"
    if policy == "fixed":
        return f"each patch kept its {options.rank} largest singular values"
    return f"each patch's rank was chosen by the '{policy}' policy"


def methods_text(options: DenoiseOptions, version: str, datatypes: List[str]) -> str:
    """The methods paragraph for these options, then its references, in Markdown."""
    cite: List[str] = []
    kinds = " and ".join({"dwi": "diffusion-weighted", "func": "functional (BOLD)"}[d] for d in datatypes)
    if options.shape_used() == "sphere":
        patch = (f"a spherical patch of radius {options.patch_radius:g} voxels" if options.patch_radius > 0.0 else
                 "the smallest spherical patch holding at least 20/17 as many voxels as the series has volumes")
    else:
        patch = ("a patch of {}x{}x{} voxels".format(*options.patch) if options.patch else
                 "the smallest cubic patch holding at least as many voxels as the series has volumes")
    text = (f"The {kinds} series were denoised with svdlr-bids {version} (svdlowrankreconstruction, built on the "
            f"ITK-free engine of the ITK [mccormick2014] remote module SVDLowRankReconstruction) by local low-rank "
            f"approximation: around every voxel, {patch} formed a matrix of patch voxels by volumes, whose "
            f"singular values at the noise level were removed; {_rank_sentence(options, cite)}.")
    estimates_sigma = options.noise_sigma is None and options.policy_used() in ("mp", "mp-cg", "gd")
    if estimates_sigma and (options.noise_estimator or _engine.DEFAULT_DENOISE_NOISE_ESTIMATOR) == "residual":
        text += (" Once a patch's rank r was chosen, its noise level was measured as the energy outside the r "
                 "components kept divided by the (voxels - r)(volumes - r) degrees of freedom they leave.")
    if options.shrinkage_used() == "frobenius":
        cite.append("gavish2017")
        text += (" The singular values kept were shrunk with Gavish and Donoho's optimal shrinker for the Frobenius "
                 "loss [gavish2017].")
    aggregation = options.aggregation or _engine.DEFAULT_DENOISE_AGGREGATION
    weighting = {"rank": ", weighted by 1/(1 + the patch's rank) [manjon2013]",
                 "gaussian": ", weighted by a Gaussian of the voxel's distance from the patch's centre (FWHM 2 "
                             "voxels) [manjon2013]"}.get(aggregation, "")
    if weighting:
        cite.append("manjon2013")
    text += (" Each voxel took the value of its own patch's reconstruction." if aggregation == "centre" else " Each voxel took the mean of the reconstructions of the patches "
             f"holding it{weighting}.")
    coils = options.coils or 1
    noise = "Rician" if coils == 1 else f"non-central chi ({coils} coils)"
    model = options.magnitude_noise_used().split("+")  # the model the run applied, the automatic one resolved
    if "vst" in model:
        cite.append("foi2011")
        text += (f" Before the low-rank step the magnitude was variance-stabilised for its {noise} noise, and after "
                 "it transformed back with the exact unbiased inverse [foi2011]" +
                 (", giving the signal with the noise floor removed." if "noise-floor" in model else "."))
    if "sigma-floor-correction" in model:
        text += (" The noise map, measured on the magnitude, was corrected for the smaller spread of its "
                 f"{noise} noise near the floor: each voxel's variance ratio at the SNR of the denoised series, "
                 "averaged over its volumes and its patch, divided out.")
    if "noise-floor" in model and "vst" not in model:
        cite.append("koay2006")
        text += (f" The {noise} noise floor was then removed from the denoised magnitude by inverting its expected "
                 "value [koay2006].")
    demean = options.demean or _engine.DEFAULT_DEMEAN
    if demean != "none":
        groups = {"all": "all its volumes", "shells": "each b-value shell", "echoes": "each echo"}[demean]
        text += (f" Each voxel's mean over {groups} was subtracted before the low-rank step and added back after, "
                 "the noise level being fitted with one degree of freedom fewer per mean removed.")
    if "func" in datatypes:
        text += (" The echoes of a multi-echo run were denoised jointly, stacked on the volume axis of one patch "
                 "matrix.")
    cite.append("mccormick2014")
    ordered = list(dict.fromkeys(cite))
    references = "\n".join(f"- [{key}] {_REFERENCES[key]}" for key in ordered)
    return f"# Methods\n\n{text}\n\n## References\n\n{references}\n"
