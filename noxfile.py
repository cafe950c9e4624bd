"""The dependency ranges pyproject.toml declares, tested at both ends (issue 50, item 4).

    pip install nox
    nox -s floor     # the TRL-facing tests at the lowest versions pyproject.toml allows
    nox -s newest    # the same tests at the newest versions on the index

Each session builds its own virtual environment: the CPU torch wheel first (as .ci/run), then grpo-lab with the
pinned floor set or the newest one, then the tests that touch TRL, transformers, accelerate and datasets. It is not
part of CI (the installs alone take minutes); run it before a release and record its result in docs/benchmarks.md
("Dependency ranges").
"""

import nox

# the lowest versions pyproject.toml declares: raise a floor here and there together
FLOOR = ["trl==1.8.0", "transformers==5.0.0", "accelerate==1.4.0", "datasets==4.7.0", "peft==0.17.0",
         "numpy==2.0.2", "matplotlib==3.9.0", "ipywidgets==8.0.0", "tqdm==4.66.3",
         "scipy==1.13.0"]
TRL_TESTS = ["tests/test_trl_trainer.py", "tests/test_trl_parity.py", "tests/test_trainer_settings.py",
             "tests/test_unsloth_patched_trl.py", "tests/test_runner.py", "tests/test_sampling.py",
             "tests/test_resume.py", "tests/test_loss.py", "tests/test_update_logs.py",
             "tests/test_viz.py", "tests/test_stats.py", "tests/test_floors.py"]
TORCH = "torch==2.13.0"  # the CPU wheel (never pinned in pyproject.toml)


def _tests(session):
    session.run("python", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=", *TRL_TESTS,
                *session.posargs)


@nox.session(venv_backend="venv")
def floor(session):
    session.install(TORCH)
    session.install("-e", ".[dev]", *FLOOR)
    _tests(session)


@nox.session(venv_backend="venv")
def newest(session):
    session.install(TORCH)
    session.install("-U", "-e", ".[dev]", "trl", "transformers", "accelerate", "datasets", "peft")
    _tests(session)
