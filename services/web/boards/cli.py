"""``roundhouse board TITLE --seed N --moves M --out FILE.svg|.png``: play M random moves of a
seeded game and draw its board (handy for screenshots)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``board`` sub-command to the ``roundhouse`` parser."""
    from services.web.boards import RENDERERS

    p = sub.add_parser("board", help="draw a title's board after M random moves (SVG or PNG)")
    p.add_argument("title", choices=sorted(RENDERERS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--moves", type=int, default=100, help="random moves to play first")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--out", required=True, help="FILE.svg or FILE.png (PNG needs chromium)")
    p.add_argument("--scale", type=float, default=1.0, help="PNG pixels per SVG unit")
    p.set_defaults(func=cmd_board)


def cmd_board(args: argparse.Namespace) -> int:
    from services.kernel.engine import InvalidOptions
    from services.web.boards import render
    from services.web.boards.play import random_view

    out = Path(args.out)
    if out.suffix.lower() not in (".svg", ".png"):
        print(f"error: --out must end in .svg or .png, got {out.name!r}", file=sys.stderr)
        return 2
    if args.moves < 0:
        print("error: --moves must be 0 or more", file=sys.stderr)
        return 2
    try:
        view = random_view(args.title, args.players, args.seed, args.moves)
    except InvalidOptions as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    svg = render(args.title, view)
    if out.suffix.lower() == ".svg":
        out.write_text(svg, encoding="utf-8")
    else:
        from services.web.boards.png import NoBrowser, svg_to_png

        try:
            svg_to_png(svg, out, scale=args.scale)
        except (NoBrowser, RuntimeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    print(out)
    return 0
