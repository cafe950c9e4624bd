"""The test command's options (pyproject's ``addopts``: ``--nbval-lax -n auto --maxprocesses=4 --dist loadfile``)
come from plugins in the ``dev`` extra (nbval, pytest-xdist). Without them pytest would stop at "unrecognized
arguments" (issue 81: a student's venv from the README's course set-up); this file then accepts those options and
stops the run with one line saying what to install."""

PLUGINS = {"pytest-xdist": "xdist", "nbval": "nbval"}  # the distribution and the name its pytest11 plugin registers


def _missing(pluginmanager) -> list[str]:
    return [name for name, plugin in PLUGINS.items() if not pluginmanager.has_plugin(plugin)]


def pytest_addoption(parser, pluginmanager):
    missing = _missing(pluginmanager)
    group = parser.getgroup("grpo-lab", "grpo-lab's stand-ins for the dev extra's options")
    if "pytest-xdist" in missing:  # "-n" is a short option, which pytest reserves for plugins: _addoption, as xdist
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None)
        group.addoption("--maxprocesses", dest="maxprocesses", default=None)
        group.addoption("--dist", dest="dist", default="no")
    if "nbval" in missing:
        group.addoption("--nbval-lax", dest="nbval_lax", action="store_true", default=False)


def pytest_configure(config):
    missing = _missing(config.pluginmanager)
    if missing:
        import pytest

        pytest.exit(f"the test suite needs the dev extra ({', '.join(missing)} not installed): "
                    "pip install -e \".[dev]\" (the README's developer set-up)", returncode=4)
