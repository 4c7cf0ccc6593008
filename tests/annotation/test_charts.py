"""The report's hand-written SVG charts: well-formed, accessible, escaped, and coloured
like matplotlib's RdYlGn (the colour map the charts used before)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from annotation import charts

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> & $x$ \\frac{'


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == f"{NS}svg" and root.get("role") == "img" and root.get("aria-label")
    assert root.find(f"{NS}title") is not None and root.find(f"{NS}desc") is not None
    assert root.get("viewBox") and root.get("width", "").endswith("pt")
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def every_chart(label: str) -> list[str]:
    return [
        charts.kappa_heatmap(
            [label, "A2", "A3"],
            [[1.0, 0.5, None], [0.5, 1.0, -0.2], [None, -0.2, 1.0]],
            title=label,
        ),
        charts.preference_bars(
            [(label, 3, 2, 1, 0), ("All", 0, 0, 0, 0)], system_a=label, system_b="B"
        ),
        charts.bars([label, "2"], [64.0, 0.0], xlabel=label, ylabel="% informative"),
        charts.scatter(
            [(0.1, 0.2), (0.5, float("nan"))], [(label, 0.3, 0.4)], xlabel=label, ylabel="y"
        ),
    ]


def test_hostile_labels_stay_text() -> None:
    for svg in every_chart(HOSTILE):
        root = parse(svg)
        assert "<script" not in svg
        assert any(HOSTILE[:20] in t for t in texts(root)), texts(root)


def test_the_heatmap_writes_values_and_marks_undefined_cells() -> None:
    root = parse(every_chart("A1")[0])
    shown = texts(root)
    assert shown.count("n/a") == 2 and shown.count("1.00") == 3 and shown.count("-0.20") == 2
    assert "2 undefined cell(s)" in "".join(root.find(f"{NS}desc").itertext())  # type: ignore[union-attr]


def test_a_long_label_is_cut_and_keeps_its_whole_text_as_a_tooltip() -> None:
    name = "an annotator with a remarkably long user name"
    root = parse(charts.kappa_heatmap([name, "b"], [[1.0, 0.1], [0.1, 1.0]], title="t"))
    cut = [t for t in root.iter(f"{NS}text") if t.find(f"{NS}title") is not None]
    assert cut and all(t.findtext(f"{NS}title") == name for t in cut)


def test_the_empty_inputs_draw_an_empty_chart() -> None:
    parse(charts.scatter([], [], xlabel="x", ylabel="y"))
    parse(charts.bars([], [], xlabel="x", ylabel="y"))
    parse(charts.preference_bars([], system_a="a", system_b="b"))


@pytest.mark.parametrize("value", [-1.0, -0.73, -0.2, 0.0, 0.41, 0.9, 1.0])
def test_the_colours_are_matplotlibs_rdylgn(value: float) -> None:
    import matplotlib

    expected = matplotlib.colormaps["RdYlGn"]((value + 1) / 2)
    ours = charts._colour(value)
    got = [int(ours[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    assert got == pytest.approx(list(expected[:3]), abs=3 / 255)


def test_ticks_are_round_and_cover_the_range() -> None:
    assert charts._ticks(0, 1.05) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert charts._ticks(0, 70.4) == [0, 20, 40, 60]  # at most 6 steps: 10 would be 7
    assert charts._ticks(-0.05, 0.05) == [-0.04, -0.02, 0, 0.02, 0.04]
