"""The one place that names the project's public repository.

Colab badges (README table, first cell of every notebook) and the Colab install cell
are generated from these values by ``scripts/build_notebooks.py``. When the
repository's address is known, change it here, run that script, and commit.
"""

GITHUB_REPO = "grpo-lab/grpo-lab"  # owner/name on GitHub: placeholder until the public address is known
BRANCH = "main"


def colab_url(notebook_path: str) -> str:
    """Colab address that opens ``notebook_path`` (relative to the repository root)."""
    return f"https://colab.research.google.com/github/{GITHUB_REPO}/blob/{BRANCH}/{notebook_path}"


def pip_spec(extra: str | None = None) -> str:
    """What ``pip install`` needs on Colab to get this package (with an optional extra) from the repository."""
    url = f"git+https://github.com/{GITHUB_REPO}@{BRANCH}"
    return f"grpo-lab[{extra}] @ {url}" if extra else url
