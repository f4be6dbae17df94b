"""The imperative language of DPIA and its passes.

    ir.py       commands (new with an address space, assign, seq, for, par_for per level,
                if, barrier, skip), expressions and acceptors, views
    views.py    resolution of views into flat loads and stores along index paths
    passes.py   the pass pipeline (data): resolve_views, insert_barriers, hoist_globals, ...
    simplify.py index conditions the loops' ranges decide, folded
    common_values.py  a value a run of assignments evaluates twice, computed once
    printer.py  readable pseudo-code (`str(program)`)
"""
