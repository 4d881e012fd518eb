"""A cell's (or a line's) code, compiled to run in the user's namespace as IPython runs it.

The magics measure a call, not a string, so the code is compiled first (outside the measured
block: parsing a large cell is not the cell's memory) and run by ``CellCode.run``. As in
IPython's ``%%time``: the source goes through IPython's input transformers (``!ls``, ``%magic``
lines inside the cell) and AST transformers, runs in the user's globals (variables it defines
stay defined), and the value of a last bare expression is returned, for the magic to return and
IPython to display as the cell's result. The code is compiled under IPython's cached file name,
so tracebacks and memgauge's line table show the cell's source.
"""

from __future__ import annotations

import ast
from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


class CellCode:
    """Compiled code of one cell or statement; ``run()`` executes it once."""

    def __init__(self, shell: InteractiveShell, source: str, *, last_expression: bool) -> None:
        self._shell = shell
        transformed = shell.transform_cell(source)  # type: ignore[no-untyped-call]  # IPython's, unannotated
        # registers the source with linecache under the name the kernel gives cells
        # (/tmp/ipykernel_PID/HASH.py in Jupyter, <ipython-input-N-HASH> in a terminal)
        self.filename = shell.compile.cache(transformed, shell.execution_count, raw_code=source)
        tree = shell.compile.ast_parse(transformed, filename=self.filename)
        tree = shell.transform_ast(tree)  # type: ignore[no-untyped-call]  # IPython's, unannotated
        expression: ast.Expression | None = None
        if last_expression and tree.body and isinstance(tree.body[-1], ast.Expr):
            expression = ast.Expression(tree.body.pop().value)
        self._body: CodeType = shell.compile(tree, self.filename, "exec")
        self._expression: CodeType | None = (
            shell.compile(expression, self.filename, "eval")  # type: ignore[arg-type]  # compile() takes ASTs
            if expression is not None
            else None
        )

    def run(self) -> Any:
        """Runs the code in the user's namespace; the last expression's value, or None."""
        shell = self._shell
        exec(self._body, shell.user_global_ns, shell.user_ns)
        if self._expression is None:
            return None
        return eval(self._expression, shell.user_global_ns, shell.user_ns)
