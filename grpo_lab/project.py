"""The one place that names the project's public repository.

Colab badges (README table, first cell of every notebook) and the Colab install cell are
generated from these values by ``scripts/build_notebooks.py``. The public address is not
known yet, so ``GITHUB_REPO`` is ``None``: the badges and install cells are then left out
(nothing points at a placeholder), and the README says how to open a notebook in Colab by
hand. When the address is known, set it here ("owner/name"), run that script, and commit.
"""

GITHUB_REPO: str | None = None  # "owner/name" on GitHub, once the public repository exists
BRANCH = "main"
# The torch releases the pinned GPU set (grpo_lab/requirements-gpu.txt) accepts: every unsloth release through
# 2026.10.9 requires torch < 2.15. Lesson 06's install cell says what pip will do with Colab's own torch.
GPU_TORCH_BELOW = (2, 15)


def repo_url() -> str | None:
    """The repository's git address (with its branch) for ``pip install git+...``; None while unset."""
    return f"https://github.com/{GITHUB_REPO}@{BRANCH}" if GITHUB_REPO else None


def colab_url(notebook_path: str) -> str | None:
    """Colab address that opens ``notebook_path`` (relative to the repository root); None while unset."""
    if not GITHUB_REPO:
        return None
    return f"https://colab.research.google.com/github/{GITHUB_REPO}/blob/{BRANCH}/{notebook_path}"


def pip_spec(extra: str | None = None) -> str | None:
    """What ``pip install`` needs on Colab to get this package (with an optional extra); None while unset."""
    if not GITHUB_REPO:
        return None
    url = f"git+https://github.com/{GITHUB_REPO}@{BRANCH}"
    return f"grpo-lab[{extra}] @ {url}" if extra else url
