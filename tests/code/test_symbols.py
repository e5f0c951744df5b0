"""Finding symbols: Python through `ast`, other languages through the generic reader."""

from __future__ import annotations

import pytest

from cairn.code.symbols import Extent, find_symbol

PY = """\
from typing import TYPE_CHECKING

LIMIT = 10


def top(a):
    return a


@decorator
@other(1)
def decorated():
    pass


class Outer:
    class Inner:
        def deep(self):
            return 1

    async def run(self):
        await x()


if TYPE_CHECKING:
    def guarded():
        ...
"""


@pytest.mark.parametrize(
    ("symbol", "extent"),
    [
        ("top", Extent(6, 7)),
        ("decorated", Extent(10, 13)),
        ("Outer", Extent(16, 22)),
        ("Outer.Inner.deep", Extent(18, 19)),
        ("Outer.run", Extent(21, 22)),
        ("LIMIT", Extent(3, 3)),
        ("guarded", Extent(26, 27)),
    ],
)
def test_python_symbols(symbol: str, extent: Extent) -> None:
    assert find_symbol("pkg/mod.py", PY, symbol) == extent


@pytest.mark.parametrize("symbol", ["missing", "Outer.missing", "top.inner", "Outer.Inner.x"])
def test_python_missing_symbols(symbol: str) -> None:
    assert find_symbol("pkg/mod.py", PY, symbol) is None


JS = """\
export function render(props) {
  const s = "}";
  return s;
}

class Widget extends Base {
  constructor() {
    super();
  }

  async update(value) {
    if (value) {
      this.v = value;
    }
  }
}

const helper = (x) => {
  return x * 2;
};
"""

GO = """\
package main

type Server struct {
\tAddr string
}

func (s *Server) Handle(w Writer) {
\tif true {
\t\tw.Write()
\t}
}

func main() {
}
"""

RUBY = """\
class Greeter
  def greet(name)
    puts name
  end

  def bye
  end
end
"""

RUST = """\
pub struct Point { x: i32 }

impl Point {
    pub fn norm(&self) -> i32 {
        self.x
    }
}

type Alias = Point;
"""


@pytest.mark.parametrize(
    ("path", "text", "symbol", "extent"),
    [
        ("web/ui.js", JS, "render", Extent(1, 4)),
        ("web/ui.js", JS, "Widget", Extent(6, 16)),
        ("web/ui.js", JS, "Widget.update", Extent(11, 15)),
        ("web/ui.js", JS, "helper", Extent(18, 20)),
        ("srv/main.go", GO, "Server", Extent(3, 5)),
        ("srv/main.go", GO, "Server.Handle", Extent(7, 11)),
        ("srv/main.go", GO, "main", Extent(13, 14)),
        ("lib/greeter.rb", RUBY, "Greeter.greet", Extent(2, 3)),
        ("src/point.rs", RUST, "Point", Extent(1, 1)),
        ("src/point.rs", RUST, "norm", Extent(4, 6)),
        ("src/point.rs", RUST, "Alias", Extent(9, 9)),
    ],
)
def test_generic_symbols(path: str, text: str, symbol: str, extent: Extent) -> None:
    assert find_symbol(path, text, symbol) == extent


def test_generic_missing_symbol() -> None:
    assert find_symbol("web/ui.js", JS, "Widget.nothing") is None
    assert find_symbol("web/ui.js", JS, "nothing") is None


def test_python_that_does_not_parse_falls_back_to_the_generic_reader() -> None:
    broken = "def ok(x):\n    return x\n\ndef broken(:\n    pass\n"
    assert find_symbol("a.py", broken, "ok") == Extent(1, 2)
