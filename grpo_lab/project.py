"""The one place that names the project's public repository.

Colab badges (README table, first cell of every notebook) and the Colab install cell are
generated from these values by ``scripts/build_notebooks.py``. The public address is not
known yet, so ``GITHUB_REPO`` is ``None``: the badges and install cells are then left out
(nothing points at a placeholder), and the README says how to open a notebook in Colab by
hand. When the address is known, set it here ("owner/name"), run that script, and commit.
"""

GITHUB_REPO: str | None = None  # "owner/name" on GitHub, once the public repository exists
BRANCH = "main"


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
