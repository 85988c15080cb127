"""Install RLA: ``pip install -e .`` (core) or ``pip install -e .[test]`` (everything the tests need)."""
from __future__ import annotations

import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
VERSION = re.search(r'__version__ = "([^"]+)"', (HERE / "RLA" / "version.py").read_text()).group(1)

# The torch versions RLA supports. The exact CPU build CI and the README commands use is pinned in
# .ci/constraints.txt (pass it with -c): a user keeps the torch (CPU or CUDA) they already have.
TORCH = "torch>=2.1"

EXTRAS = {
    "torch": [TORCH],
    "sb3": [TORCH, "stable-baselines3>=2.3", "gymnasium>=0.29"],
    "video": ["imageio>=2.31", "imageio-ffmpeg>=0.4.9"],
    "ftp": ["pyftpdlib>=1.5.9"],
    "tensorboard": ["tensorboard>=2.14"],  # TensorBoard's own reader (RLA.logger.read_tb)
    "ui": ["starlette>=0.37", "uvicorn>=0.29"],  # rla ui (the web dashboard)
    # Sweeps and clusters (RLA.integrations.ray_tune / submitit_job / hydra_run)
    "ray": ["ray[tune]>=2.41,<3"],
    "submitit": ["submitit>=1.5,<2"],
    "hydra": ["hydra-core>=1.3,<2", "hydra-submitit-launcher>=1.2,<2"],
    "s3": ["s3fs>=2023.6", "fsspec>=2023.6"],  # object storage as the main node (RLA.sync.s3)
}
# Everything the test suite uses (the sync tests also need Debian's openssh-server,
# installed by .ci/install-test-deps).
EXTRAS["test"] = sorted({
    TORCH, "pytest>=7.4", "pytest-timeout>=2.2", "pyftpdlib>=1.5.9", "tensorboard>=2.14",
    "imageio>=2.31", "imageio-ffmpeg>=0.4.9", "gymnasium>=0.29", "stable-baselines3>=2.3",
    "starlette>=0.37", "uvicorn>=0.29", "httpx>=0.27", "selenium>=4.15",
    "ray[tune]>=2.41,<3", "submitit>=1.5,<2", "hydra-core>=1.3,<2",
    "s3fs>=2023.6", "moto[server]>=5.0,<6", "boto3>=1.28",  # the S3 tests: moto's server on 127.0.0.1
    "ruff>=0.9", "mypy>=1.10",  # .ci/run's lint, format and type checks (exact versions: .ci/constraints.txt)
})
# The peers the benchmarks measure RLA against.
EXTRAS["bench"] = sorted({TORCH, "mlflow>=2.10", "stable-baselines3>=2.3", "torchrl", "tensordict",
                          "tensorboard>=2.14"})
EXTRAS["all"] = sorted({dep for deps in EXTRAS.values() for dep in deps})

setup(
    name="RLA",
    version=VERSION,
    description="Experiment manager for reinforcement-learning research: every run is an item of a "
                "database on the filesystem.",
    long_description=(HERE / "README.md").read_text(encoding="utf-8") if (HERE / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=find_packages(include=["RLA", "RLA.*", "rla_scripts", "rla_scripts.*"]),
    include_package_data=True,
    package_data={"RLA.config": ["*.yaml"],
                  "RLA.ui": ["static/*.html", "static/*.js", "static/*.css", "static/vendor/*"]},
    install_requires=[
        "numpy>=1.22",
        "pyyaml>=5.4",
        "gitpython>=3.1",
        "tensorboardX>=2.6",
        "pandas>=1.5",
        "paramiko>=3.0",
        "pathspec>=0.11",
        "tqdm>=4.60",
        "matplotlib>=3.5",
        # accelerated CRC-32 for replay snapshots (zlib's values; RLA falls back to zlib where
        # it is missing): 17 against 4 GB/s, 15-35% faster cold loads of state-sized buffers
        'isal>=1.5; platform_machine == "x86_64" or platform_machine == "AMD64" or '
        'platform_machine == "aarch64" or platform_machine == "arm64"',
        # RE2 for matches() in queries: linear-time matching, no catastrophic backtracking
        # (RLA.query.regex falls back to a restricted `re` where no wheel exists)
        'google-re2>=1.1; platform_machine == "x86_64" or platform_machine == "AMD64" or '
        'platform_machine == "aarch64" or platform_machine == "arm64"',
    ],
    extras_require=EXTRAS,
    entry_points={
        "console_scripts": ["rla = rla_scripts.cli:main"],
    },
)
