#!/usr/bin/env bash
# Session 29, device call 2: issue 12's H200 targets left to re-measure with today's default (Jacobi 2D with the
# neighbourhood tiles, the sum of 2^28 floats), each explored 90 s against its reference in the same run.
BUDGET=90 bash benchmarks/h200_explore.sh jacobi2d_5:h=8192,w=8192 total:n=268435456
