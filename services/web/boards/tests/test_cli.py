"""``roundhouse board``: a seeded game drawn to an SVG file; bad arguments refused with a reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from services.cli.main import main


def test_board_svg(tmp_path, capsys) -> None:
    out = tmp_path / "b.svg"
    assert main(["board", "e1894", "--seed", "4", "--moves", "40", "--out", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    hexes = [e for e in root.iter() if (e.get("class") or "") in ("hex", "tile")]
    assert len(hexes) == 76  # every hex of the 1894 map, laid or not
    again = tmp_path / "c.svg"
    main(["board", "e1894", "--seed", "4", "--moves", "40", "--out", str(again)])
    assert again.read_text() == out.read_text()


def test_board_refuses_bad_arguments(tmp_path, capsys) -> None:
    assert main(["board", "e1894", "--out", str(tmp_path / "b.gif")]) == 2
    assert "must end in .svg or .png" in capsys.readouterr().err
    assert main(["board", "e1894", "--players", "9", "--out", str(tmp_path / "b.svg")]) == 2
    assert "3 to 4 players" in capsys.readouterr().err
    assert not (tmp_path / "b.svg").exists()
