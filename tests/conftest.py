"""Shared test settings.

- HYPOTHESIS_PROFILE=thorough runs many more random instances (the CI profile keeps the
  suite well under 15 minutes).
- Every kernel a test launches is launched again under Oclgrind after the test, which
  fails when Oclgrind reports a problem (tests/oclgrind.py); `--oclgrind=small` (the
  default) checks launches of at most 65536 elements of work (`--oclgrind-max-work`: the
  inputs' elements, or the product of the sizes if larger), `--oclgrind=all` every launch,
  `--oclgrind=off` none.  The summary line says how many kernels were
  built, launched and checked.
- Markers: `slow` (over about a second: `-m "not slow"` runs the rest in well under a
  minute), `device` (needs an OpenCL device) and `oclgrind_off(reason)` (kernels not checked
  again under Oclgrind: NOT_REPLAYED below).  Tests in files other than tests/dpia and
  the README/example tests are marked from the lists below, measured with --durations.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .oclgrind import DEFAULT_LIMIT, Replayer, describe

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Modules whose tests run kernels on an OpenCL device (every test in them is marked `device`).
DEVICE_MODULES = {
    "tests/test_algorithmic.py", "tests/test_cli.py", "tests/test_default_schedule.py", "tests/test_examples.py",
    "tests/test_explore.py", "tests/test_programs.py", "tests/test_runtime_cache.py", "tests/test_tuning.py",
    "tests/test_variants.py", "tests/test_readme.py", "tests/dpia/test_translate.py", "tests/test_plots.py",
    "tests/test_fuzz.py", "tests/test_language.py", "tests/test_total_lowering.py", "tests/test_pipeline.py",
    "tests/test_generated_space.py", "tests/test_barriers.py", "tests/test_cluster.py",
}
# Tests measured at half a second or more on 2 cores, and the per-rule checks (hundreds of
# instances, each rule against the interpreter: also `dpia rules --check`).  Node ids, or a
# prefix ending in "::" or "[" (every exploration test starts worker processes).
SLOW = {
    "tests/dpia/test_translate.py::test_kernel_agrees_with_interpreter_on_pocl[seed_reduction_v1]",
    "tests/dpia/test_translate.py::test_seed_reduction_versions_sum_each_block[1]",
    "tests/functional/test_derivation.py::test_every_rule_step_round_trips[",
    "tests/functional/test_interp.py::test_arbitrary_inputs_never_raise_raw_python_exceptions",
    "tests/functional/test_nat.py::test_aligned_division_agrees_with_integers_on_random_values",
    "tests/functional/test_nat.py::test_c_text_compiles_and_agrees_with_gcc",
    "tests/functional/test_nat.py::test_divides_holds_on_samples",
    "tests/functional/test_nat.py::test_exact_division_cancels",
    "tests/functional/test_nat.py::test_floor_mod_identity",
    "tests/functional/test_nat.py::test_proves_lt_holds_on_samples",
    "tests/functional/test_nat.py::test_ring_laws_hold_syntactically",
    "tests/functional/test_nat.py::test_substitute_agrees_with_evaluation",
    "tests/functional/test_rules.py::test_rule_fails_cleanly_where_it_does_not_match[",
    "tests/functional/test_rules.py::test_rule_preserves_meaning[",
    "tests/functional/test_rules.py::test_tiling_side_condition_is_exact",
    "tests/functional/test_schedules.py::test_derivation_text_replays[mm_register_blocked]",
    "tests/functional/test_schedules.py::test_derivation_text_replays[mm_register_blocked_1d]",
    "tests/functional/test_schedules.py::test_derivation_text_replays[mm_tiled]",
    "tests/functional/test_schedules.py::test_mm_register_blocked_keeps_blocks_in_private_memory",
    "tests/functional/test_schedules.py::test_mm_tiled_copies_tiles_to_local_memory_once_per_step",
    "tests/functional/test_schedules.py::test_schedule_lowers_typechecks_and_computes[mm_register_blocked]",
    "tests/functional/test_schedules.py::test_schedule_lowers_typechecks_and_computes[mm_register_blocked_1d]",
    "tests/functional/test_schedules.py::test_schedule_lowers_typechecks_and_computes[mm_tiled]",
    "tests/functional/test_schedules.py::test_tile_reduction_and_register_blocking_2d_stay_high_level_and_correct",
    "tests/functional/test_strategies.py::test_deep_beta_chain_rewrites_and_replays",
    "tests/functional/test_strategies.py::test_deep_scalar_chain",
    "tests/functional/test_strategies.py::test_two_thousand_nested_maps",
    "tests/functional/test_syntax.py::test_damaged_text_raises_only_parse_errors",
    "tests/functional/test_syntax.py::test_renaming_keeps_programs_equal",
    "tests/functional/test_syntax.py::test_round_trip_of_random_programs",
    "tests/functional/test_syntax.py::test_single_changes_make_programs_unequal",
    "tests/test_algorithmic.py::",  # each builds a generated space (seconds)
    "tests/test_cli.py::test_an_interrupted_exploration_keeps_what_it_measured",
    "tests/test_cli.py::test_check_passes_for_every_rule",
    "tests/test_cli.py::test_explore_with_a_tiny_budget",
    "tests/test_cli.py::test_python_dash_m_dpia",
    "tests/test_cli.py::test_python_dash_m_dpia_devices",
    "tests/test_cli.py::test_run_text_reports_gflops_for_mm",
    "tests/test_examples.py::test_lowered_seed_programs_run_on_the_device",
    "tests/test_explore.py::",
    "tests/test_cluster.py::",  # a local Ray cluster and its actors (seconds each)
    "tests/test_duplicates.py::test_an_exploration_on_pocl_measures_each_kernel_once_and_few_duplicates",
    "tests/test_search_diversity.py::",  # a generated space searched to 114 candidates; an exploration on PoCL
    "tests/test_pipeline.py::test_the_exploration_reports_the_pipelines_stages",
    "tests/test_pipeline.py::test_the_exploration_runs_a_replaced_stage",
    "tests/test_generated_space.py::",
    "tests/test_fuzz.py::test_a_program_without_an_answer_in_time_is_a_hang_and_its_worker_replaced",
    "tests/test_fuzz.py::test_ci_fuzz_run_has_no_more_failures_than_known",
    "tests/test_fuzz.py::test_every_program_types_interprets_and_reads_back",
    "tests/test_fuzz.py::test_one_seed_runs_in_process_and_agrees_with_the_worker",
    "tests/test_fuzz.py::test_passing_seeds_are_clean_under_oclgrind",
    "tests/test_plots.py::test_all_failed_run",
    "tests/test_plots.py::test_empty_run",
    "tests/test_plots.py::test_single_candidate_run",
    "tests/test_plots.py::test_writes_both_pictures",
    "tests/test_runtime_cache.py::test_a_failed_build_reports_log_and_source_and_is_not_remembered",
    "tests/test_total_lowering.py::",
    "tests/test_tuning.py::test_concurrent_processes_keep_every_row",
    "tests/test_variants.py::test_a_preset_maps_its_roles_to_the_programs_own_size_names",
    "tests/test_variants.py::test_a_preset_that_fits_runs_before_the_default",
}

# Tests whose kernels are not checked again under Oclgrind, with the reason.
NOT_REPLAYED = {
    "tests/test_fuzz.py::test_ci_fuzz_run_has_no_more_failures_than_known":
        "hundreds of random programs (too slow to simulate all); a sample of seeds is checked under Oclgrind "
        "by test_passing_seeds_are_clean_under_oclgrind",
    **{f"tests/test_suite.py::test_compiled_agrees_with_numpy_on_pocl_at_moderate_sizes[{name}]":
       "all-pairs loops at moderate sizes take minutes to simulate; the same programs' kernels are checked under "
       "Oclgrind at small sizes by test_every_entry_is_clean_under_oclgrind_at_small_sizes"
       for name in ("nbody", "mri_q", "mri_q_two_reductions")},
    "tests/test_search_diversity.py::test_an_exploration_on_pocl_with_a_small_budget_tries_every_class":
        "a test of what the search proposes; its kernels are points of gemv's space, which "
        "tests/test_generated_space.py's sampled gemv points check under Oclgrind",
}

_REPLAYER = pytest.StashKey[Replayer]()
_SESSION_FOLDER = pytest.StashKey[str]()
_SESSION_PROBLEMS = pytest.StashKey[str]()


def pytest_addoption(parser):
    parser.addoption("--oclgrind", choices=("small", "all", "off"), default="small",
                     help="launch again under Oclgrind the kernels each test launched: those with small inputs "
                          "(default), all, or none")
    parser.addoption("--oclgrind-max-work", type=int, default=DEFAULT_LIMIT,
                     help="with --oclgrind=small: the most work (input elements, or the product of the sizes "
                          f"if larger) of a launch checked (default {DEFAULT_LIMIT})")


def pytest_configure(config):
    mode = config.getoption("--oclgrind")
    limit = None if mode == "all" else config.getoption("--oclgrind-max-work")
    config.stash[_REPLAYER] = Replayer(enabled=mode != "off", limit=limit)
    if mode == "off":
        return
    # Launches outside any test (module- and session-scoped fixtures) are recorded here and
    # checked when the session ends; each test records into its own folder (below).
    folder = tempfile.mkdtemp(prefix="dpia-kernels-session-")
    config.stash[_SESSION_FOLDER] = folder
    os.environ["DPIA_RECORD_KERNELS"] = folder
    os.environ["DPIA_RECORD_KERNELS_LIMIT"] = str(limit if limit is not None else 1 << 62)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if _SESSION_FOLDER in config.stash:
        folder = config.stash[_SESSION_FOLDER]
        os.environ.pop("DPIA_RECORD_KERNELS", None)
        bad = config.stash[_REPLAYER].check(Path(folder))
        config.stash[_REPLAYER].close()
        shutil.rmtree(folder, ignore_errors=True)
        if bad:
            config.stash[_SESSION_PROBLEMS] = describe(bad)
    worker_output = getattr(config, "workeroutput", None)
    if worker_output is not None:  # a pytest-xdist worker: the controller reports (pytest_testnodedown)
        worker_output["oclgrind"] = config.stash[_REPLAYER].record()
        worker_output["oclgrind_problems"] = config.stash.get(_SESSION_PROBLEMS, None)
    elif _SESSION_PROBLEMS in config.stash:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller: a worker's Oclgrind counts join the session's summary and
    the problems its fixtures' launches had fail the session (as without workers)."""
    output = getattr(node, "workeroutput", None) or {}
    config = node.config
    if "oclgrind" in output:
        config.stash[_REPLAYER].merge(output["oclgrind"])
    if output.get("oclgrind_problems"):
        earlier = config.stash.get(_SESSION_PROBLEMS, "")
        config.stash[_SESSION_PROBLEMS] = "\n".join(filter(None, (earlier, output["oclgrind_problems"])))


def pytest_collection_modifyitems(config, items):
    root = Path(config.rootpath)
    for item in items:
        module = Path(item.fspath).resolve().relative_to(root).as_posix()
        if module in DEVICE_MODULES:
            item.add_marker(pytest.mark.device)
        if item.nodeid in SLOW or any(s.endswith(("::", "[")) and item.nodeid.startswith(s) for s in SLOW):
            item.add_marker(pytest.mark.slow)
        if item.nodeid in NOT_REPLAYED:
            item.add_marker(pytest.mark.oclgrind_off(NOT_REPLAYED[item.nodeid]))


@pytest.fixture(autouse=True)
def _kernels_checked_under_oclgrind(request, monkeypatch):
    """Record the kernels the test launches (in any process), then check them under Oclgrind."""
    replayer = request.config.stash[_REPLAYER]
    if not replayer.enabled or request.node.get_closest_marker("oclgrind_off"):
        monkeypatch.delenv("DPIA_RECORD_KERNELS", raising=False)  # nor recorded for the session's check
        yield
        return
    with tempfile.TemporaryDirectory(prefix="dpia-kernels-") as folder:
        monkeypatch.setenv("DPIA_RECORD_KERNELS", folder)  # back to the session's folder after the test
        yield
        monkeypatch.delenv("DPIA_RECORD_KERNELS")  # the checks below build kernels too: not recorded
        bad = replayer.check(Path(folder))
    if bad:
        pytest.fail(describe(bad), pytrace=False)


def pytest_terminal_summary(terminalreporter, config):
    if _SESSION_PROBLEMS in config.stash:
        terminalreporter.write_sep("=", "Oclgrind: kernels launched outside tests (fixtures)", red=True)
        terminalreporter.write_line(config.stash[_SESSION_PROBLEMS])
    terminalreporter.write_line(config.stash[_REPLAYER].summary())


@pytest.fixture(autouse=True)
def _one_typing_memo_per_test(request):
    """Each test's typings remembered for the test (functional.infer.typing_memo): its
    derivations re-type the same rewritten subterms again and again, as a space's build does
    (the suite's heaviest modules 13 % faster).  The memo is pure (keyed by exact terms and
    types) and dropped with the test; `no_typing_memo` tests run without one."""
    from functional.infer import typing_memo

    if request.node.get_closest_marker("no_typing_memo"):
        yield
        return
    with typing_memo():
        yield
