"""The trusted checkers: small, boring code that re-checks what the searchers claim.

Nothing in this package imports a solver, a searcher or the simulator (a test
enforces it), so a reviewer can read all of the trusted code in one place.
"""
