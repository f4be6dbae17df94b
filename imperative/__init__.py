"""The imperative IR with explicit memory spaces and barriers, and its passes.

Not built yet: issue 4 fills this package (new/assign/for/par_for/barrier, views,
simplification, barrier insertion, allocation hoisting).
"""
