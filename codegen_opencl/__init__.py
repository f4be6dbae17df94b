"""OpenCL C / C printers and the pyopencl runtime.

Not built yet: issue 4 fills this package.
"""
