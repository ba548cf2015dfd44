"""One line per check for the Python tests: PASS name, or FAIL name: why (tests/run_tests.sh
counts them), and the exit status from the count."""

failed = 0


def report(name, problem):
    """PASS name when problem is empty, else FAIL name: problem."""
    global failed
    if problem:
        failed += 1
        print(f"FAIL {name}: {problem}")
    else:
        print(f"PASS {name}")


def status():
    """The exit status: 1 when any check failed."""
    return 1 if failed else 0
