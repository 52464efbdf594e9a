"""Just enough of a terminal for the fleet scripts (fleet-pty.py,
fleet-scale.py) to read what `plugtop fleet` shows: ratatui through
crossterm writes cursor moves (CSI row;col H), text and clears; colours and
modes are ignored."""
import codecs
import re


class Screen:
    """Just enough of a terminal for what ratatui and crossterm write:
    cursor moves (CSI row;col H), text, clears; colours ignored."""

    def __init__(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.grid = [[" "] * self.cols for _ in range(self.rows)]
        self.row = self.col = 0
        self.pending = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data):
        text = self.pending + self.decoder.decode(data)
        self.pending = ""
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\x1b":
                m = re.match(r"\x1b\[([?0-9;]*)([A-Za-z])", text[i:])
                if not m:
                    if len(text) - i < 32:
                        self.pending = text[i:]
                        return
                    i += 1
                    continue
                args, op = m.group(1), m.group(2)
                if op == "H":
                    parts = [int(p or 1) for p in args.split(";")] if args else [1, 1]
                    self.row, self.col = parts[0] - 1, (parts[1] if len(parts) > 1 else 1) - 1
                elif op == "J" and args in ("2", "3"):
                    self.grid = [[" "] * self.cols for _ in range(self.rows)]
                i += len(m.group(0))
                continue
            if c == "\r":
                self.col = 0
            elif c == "\n":
                self.row = min(self.row + 1, self.rows - 1)
            elif c >= " " and 0 <= self.row < self.rows and 0 <= self.col < self.cols:
                self.grid[self.row][self.col] = c
                self.col += 1
            i += 1

    def text(self):
        return "\n".join("".join(r) for r in self.grid)


