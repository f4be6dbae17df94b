"""DPIA: the strategy-preserving translation from low-level functional programs to the
imperative IR (phrase types exp/acc/comm, acceptor and continuation translations).

Not built yet: issue 4 fills this package.  Importing it gives the functional layer's
public API so that `dpia` is the project's entry point from the start.
"""
