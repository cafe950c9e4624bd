"""Interactive explorers: thin ipywidgets wrappers around :mod:`grpo_lab.viz` (notebook 01).

Every explorer first displays a static figure for its initial values, so a notebook
executed headless (nbval, CI, a rendered page) still shows the plot; in a live kernel
the sliders below it redraw.
"""

from __future__ import annotations

import torch

from . import viz
from .advantages import ESTIMATORS


def _sample_groups(p: float, G: int, n_groups: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(n_groups, G, generator=gen) < p).float().reshape(-1)


def bandit_figure(p: float = 0.2, G: int = 4, method: str = "grpo", n_groups: int = 4, seed: int = 0):
    """The explorer's figure: ``n_groups`` sampled groups and their advantages under ``method``."""
    r = _sample_groups(p, G, n_groups, seed)
    return viz.group_advantages(r, G, methods=(method,))


def _explorer(make_figure, **controls):
    """Display ``make_figure(**initial values)`` statically, then return sliders that redraw it below.

    The sliders' first drawing, which ``ipywidgets.interactive`` makes as it is built, is skipped: the static
    figure already shows it, and an output captured into a widget while a notebook runs headless makes nbclient
    (nbgrader's autograde, ``build_notebooks --execute``) send the widget's state back on the shell channel while it
    waits there for the cell's reply, which sometimes never wakes it (nbclient issue 312; lesson 01's autograde hung
    one time in six, tests/test_nbgrader.py). Nothing is captured until a slider moves in a live kernel."""
    import ipywidgets as w
    from IPython.display import HTML, display

    display(make_figure(**{name: c.value for name, c in controls.items()}))  # static figure, for headless runs
    display(HTML("<p><em>The sliders below need a live Python kernel (on a web page, also the Jupyter widget "
                 "manager, loaded from the network); the figure above is their starting state.</em></p>"))
    out = w.Output()
    first = True

    def redraw(**values):
        nonlocal first
        if first:  # interactive's own first call, as it is built: the static figure above is that drawing
            first = False
            return
        out.clear_output(wait=True)
        with out:
            display(make_figure(**values))

    return w.VBox([w.interactive(redraw, **controls), out])


def bandit_explorer(p: float = 0.2, G: int = 4, method: str = "grpo", n_groups: int = 4, seed: int = 0):
    """Sliders for p, G and the estimator over :func:`bandit_figure`. Returns the widget."""
    import ipywidgets as w

    return _explorer(
        lambda p, G, method, seed: bandit_figure(p, G, method, n_groups, seed),
        p=w.FloatSlider(value=p, min=0.0, max=1.0, step=0.05, description="p"),
        G=w.IntSlider(value=G, min=2, max=16, description="G"),
        method=w.Dropdown(options=list(ESTIMATORS), value=method, description="estimator"),
        seed=w.IntSlider(value=seed, min=0, max=20, description="seed"),
    )


__all__ = ["bandit_explorer", "bandit_figure"]
