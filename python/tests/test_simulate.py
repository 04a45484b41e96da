"""import parasim: the same numbers as the CLI, errors as parasim.InputError."""
import json
import os
import subprocess

import pytest

import parasim

CLI = os.environ.get("PARASIM_CLI", "build/cli/parasim")
LAB = "scenarios/jobs/llama2-7b-lab.yaml"


def cli_json(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


def same_document(document, text):
    """The CLI's JSON text holds the same values, keys in the same order, as the module's document.
    (Compared through Python's own printing: nlohmann's shortest-digits search may print a double
    with one digit more than Python's repr, 0.8602569789769831 for 0.860256978976983.)"""
    return json.dumps(document, indent=2, ensure_ascii=False) == json.dumps(json.loads(text), indent=2, ensure_ascii=False)


def test_simulate_is_the_cli_json():
    result = parasim.simulate(LAB)
    text = cli_json("simulate", LAB, "--json")
    assert same_document(result.to_dict(), text)
    document = json.loads(text)
    assert result.iteration_s == document["iteration_s"]
    assert 0 < result.mfu < 1 and result.fits
    assert result.interval == document["interval"] and result.interval["lo"] < result.interval["hi"]
    assert result.stages == document["stages"] and len(result.stages) == 2
    assert result.memory == document["memory"] and result.critical_path == document["critical_path"]
    assert result.plan == document["plan"]


def test_a_long_pipeline_extrapolated_and_replayed_whole_as_the_cli():
    # 256 micro-batches per pipeline: three replays (4, 6, 8) and 124 rounds of 2 added, within 0.1% of the whole replay.
    overrides = {"plan.global_batch": 1024}
    fast = parasim.simulate(LAB, set=overrides)
    whole = parasim.simulate(LAB, set=overrides, full_replay=True)
    assert fast.to_dict()["extrapolated_rounds"] == 124 and whole.to_dict()["extrapolated_rounds"] == 0
    assert abs(fast.iteration_s - whole.iteration_s) <= 1e-3 * whole.iteration_s
    assert fast.to_dict() == json.loads(cli_json("simulate", LAB, "--set", "plan.global_batch=1024", "--json"))
    assert whole.to_dict() == json.loads(cli_json("simulate", LAB, "--set", "plan.global_batch=1024", "--full-replay", "--json"))


def test_a_loaded_scenario_is_simulated_again_with_the_same_result():
    scenario = parasim.load_scenario(LAB, set={"training.seq_len": 2048})
    assert scenario.gpus == 16 and scenario.name == "llama2-7b-lab"
    first, second = parasim.simulate(scenario), parasim.simulate(scenario)
    assert first.to_dict() == second.to_dict()
    assert first.iteration_s == json.loads(cli_json("simulate", LAB, "--set", "training.seq_len=2048", "--json"))["iteration_s"]


def test_overrides_as_a_list_and_a_plan_file(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text("plan:\n  tp: 2\n  pp: 1\n  dp: 8\n  micro_batch: 1\n  global_batch: 32\n")
    result = parasim.simulate(LAB, plan=str(plan), set=["training.seq_len=2048"])
    text = cli_json("simulate", LAB, "--set", "training.seq_len=2048", "--plan", str(plan), "--json")
    assert result.to_dict() == json.loads(text)
    assert result.to_dict()["plan"].startswith("tp2")


def test_a_bad_override_is_an_input_error_with_where_and_what():
    with pytest.raises(parasim.InputError) as e:
        parasim.load_scenario(LAB, set={"training.seq_len": "many"})
    assert e.value.file == "--set" and e.value.key == "training.seq_len"
    assert str(e.value).startswith("--set: error: training.seq_len:")


def test_a_bad_file_names_its_line():
    # The CLI's own bad-input fixture: the same one line, as the exception's text and fields.
    bad = "tests/cli/bad/bad_number.yaml"
    with pytest.raises(parasim.InputError) as e:
        parasim.simulate(bad)
    assert str(e.value) + "\n" == open("tests/cli/bad/bad_number.expected").read()
    assert e.value.file == bad and e.value.line > 1 and e.value.column > 0
    assert str(e.value) == f"{bad}:{e.value.line}:{e.value.column}: error: {e.value.key}: {e.value.message}"


def test_validate_is_the_cli_json():
    rows = ["tests/data/validation/sample.yaml", "tests/data/validation/stacks.yaml"]
    report = parasim.validate(rows, by="family", threads=2)
    text = cli_json("validate", *rows, "--by", "family", "--json")
    assert same_document(report.to_dict(), text)
    assert report.simulated == json.loads(text)["summary"]["simulated"] and 0 < report.mape < 1


def test_validate_by_release_groups_as_the_cli_does():
    rows = ["tests/data/validation/stacks.yaml"]
    report = parasim.validate(rows, by="stack,release", threads=1).to_dict()
    assert same_document(report, cli_json("validate", *rows, "--by", "stack,release", "--json"))
    keys = {(g["key"]["stack"], g["key"]["release"]) for g in report["by"]["groups"]}
    assert ("Megatron-DeepSpeed", "2022") in keys and ("NeMo", "25.04") in keys and ("Megatron-LM", "r0.8") in keys


def test_validate_a_bad_grouping_is_an_input_error():
    with pytest.raises(parasim.InputError) as e:
        parasim.validate(["tests/data/validation/sample.yaml"], by="colour")
    assert e.value.key == "by" and "'colour' is not a row property" in e.value.message


def test_model_from_hf_is_the_cli_json_from_a_path_or_a_dict():
    config = "tests/data/hf/qwen3-30b-a3b/config.json"
    model = parasim.model_from_hf(config, seq=4096)
    text = cli_json("model", config, "--seq", "4096", "--json")
    assert same_document(model.to_dict(), text)
    assert model.layers == 48 and model.parameters == json.loads(text)["parameters"]["total"]
    from_dict = parasim.model_from_hf(json.load(open(config)), seq=4096).to_dict()
    assert {k: v for k, v in from_dict.items() if k != "name"} == {k: v for k, v in model.to_dict().items() if k != "name"}


def test_plan_is_the_cli_json_with_its_launch_files(tmp_path):
    report = parasim.plan(LAB, fix={"tp": 2}, top=3, threads=2)
    text = cli_json("plan", LAB, "--fix", "tp=2", "--json", "--out", str(tmp_path))
    assert same_document(report.to_dict(), text)
    assert [c.to_dict() for c in report.candidates] == json.loads(text)["plans"][:3]
    assert all(c.tp == 2 for c in report.candidates) and report.candidates[0].rank == 1
    # The report reads as the list of its candidates.
    assert len(report) == 3 and [c.rank for c in report] == [1, 2, 3] and report[-1].rank == 3
    with pytest.raises(IndexError):
        report[3]
    assert report.recommended.recommended and report.framework == "Megatron-LM"
    # "Fits" keeps the memory model's error free by default: every plan, the recommended one too.
    document = report.to_dict()
    headroom = document["capacity_bytes"] - document["budget_bytes"]
    assert headroom > 0 and all(c.margin >= headroom for c in report.candidates) and report.recommended.margin >= headroom
    assert report.launch_files.keys() == {p.name for p in tmp_path.iterdir()}
    for name, body in report.launch_files.items():
        assert (tmp_path / name).read_text() == body
    # The launched plan, simulated again from the best_plan.yaml it wrote, is the recommended candidate.
    again = parasim.simulate(LAB, plan=str(tmp_path / "best_plan.yaml"))
    assert again.iteration_s == report.recommended.iteration_s
    lo, hi = report.candidates[0].interval["lo"], report.candidates[0].interval["hi"]
    assert lo <= report.candidates[0].iteration_s <= hi or lo < hi


def test_plan_runs_interleaved_micro_batches_pp_does_not_divide_in_megatron_groups():
    # 6 micro-batches a replica over pp 4: Megatron-Core's groups of 6, launched as printed.
    report = parasim.plan(LAB, set={"plan.global_batch": 24}, fix={"pp": 4, "schedule": "interleaved-1f1b", "mb": 1},
                          framework="megatron", top=1)
    best = report.candidates[0]
    assert best.microbatch_group == 6 and "in groups of 6" in best.plan
    assert "--microbatch-group-size-per-virtual-pipeline-stage 6" in report.launch_files["megatron_args.txt"]


def test_plan_for_torchtitan_writes_its_job_config():
    report = parasim.plan(LAB, set={"model": "scenarios/models/llama-3-8b.yaml"}, framework="torchtitan", top=1)
    assert report.framework == "torchtitan" and "torchtitan.toml" in report.launch_files
    assert "[parallelism]" in report.launch_files["torchtitan.toml"]


def test_plan_reports_progress_through_the_callback():
    calls = []
    parasim.plan(LAB, top=1, progress=lambda phase, done, total: calls.append((phase, done, total)))
    phases = [c[0] for c in calls]
    assert phases[0] == "analytical" and phases[-1] == "simulated"
    assert all(0 < done <= total for _, done, total in calls)
    assert calls[-1][1] == calls[-1][2]


def test_an_exception_in_the_progress_callback_is_raised_after_the_work():
    def stop(phase, done, total):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        parasim.plan(LAB, top=1, progress=stop)


@pytest.mark.parametrize("argument", [{"simulate_top": 0}, {"top": -1}, {"global_batch": -3}, {"max_pp": -1}, {"threads": -2}])
def test_plan_a_number_out_of_range_is_an_input_error_naming_it(argument):
    with pytest.raises(parasim.InputError) as e:
        parasim.plan(LAB, **argument)
    name, value = next(iter(argument.items()))
    assert e.value.key == name and e.value.message.startswith(f"{value} is not between")


def test_plan_a_pin_that_removes_every_candidate_is_an_input_error():
    with pytest.raises(parasim.InputError) as e:
        parasim.plan("scenarios/default.yaml", fix={"tp": 16})
    cli = subprocess.run([CLI, "plan", "scenarios/default.yaml", "--fix", "tp=16"], capture_output=True, text=True)
    assert cli.returncode == 2 and cli.stderr == str(e.value) + "\n"
    assert "tp 16 does not divide the 8 key/value heads" in e.value.message


def test_whatif_is_the_cli_json():
    vary = {"cluster.nodes": [1, 2], "cluster.node.nics.bandwidth": ["100Gb/s", "400Gb/s"]}
    seen = []
    study = parasim.whatif(LAB, vary=vary, threads=2, progress=lambda phase, done, total: seen.append(done))
    text = cli_json("whatif", LAB, "--vary", "cluster.nodes=1,2", "--vary", "cluster.node.nics.bandwidth=100Gb/s,400Gb/s", "--json")
    assert same_document(study.to_dict(), text)
    assert [v.values for v in study.variants][1] == {"cluster.nodes": "1", "cluster.node.nics.bandwidth": "400Gb/s"}
    assert study.variants[3].gpus == 16 and study.variants[3].iteration_s < study.variants[0].iteration_s
    assert len(study) == 4 and [v.label for v in study] == [v.label for v in study.variants] and study[0].gpus == 8
    assert sorted(seen) == [1, 2, 3, 4]


def test_whatif_a_bad_value_is_an_input_error_naming_the_key():
    with pytest.raises(parasim.InputError) as e:
        parasim.whatif(LAB, vary={"cluster.nodes": ["two"]})
    assert e.value.key == "cluster.nodes" and e.value.file == "--vary"


def test_validate_reports_progress_per_row():
    seen = []
    parasim.validate(["tests/data/validation/sample.yaml"], progress=lambda phase, done, total: seen.append((phase, done, total)))
    assert seen and seen[-1][1] == seen[-1][2] and {p for p, _, _ in seen} == {"rows"}


def lab_as_dict():
    return {
        "name": "lab-from-dict",
        "cluster": "scenarios/clusters/lab-2node.yaml",
        "model": "scenarios/models/llama-2-7b.yaml",
        "training": {"precision": "bf16", "seq_len": 4096, "attention": "flash"},
        "plan": {"tp": 2, "sp": True, "pp": 2, "dp": 4, "micro_batch": 1, "global_batch": 32, "zero": 1, "overlap": {"grad_reduce": True}},
    }


def test_a_scenario_given_as_a_dict_is_the_scenario_file():
    from_dict = parasim.simulate(lab_as_dict())
    from_file = parasim.simulate(LAB, plan=None)
    assert from_dict.iteration_s == from_file.iteration_s
    assert {k: v for k, v in from_dict.to_dict().items() if k != "scenario"} == {k: v for k, v in from_file.to_dict().items() if k != "scenario"}
    assert parasim.load_scenario(lab_as_dict(), set={"cluster.nodes": 4, "plan.dp": 8}).gpus == 32
    assert parasim.plan(lab_as_dict(), top=1).candidates[0].plan == parasim.plan(LAB, top=1).candidates[0].plan


def test_a_bad_value_in_a_dict_names_its_line():
    scenario = lab_as_dict()
    scenario["training"]["seq_len"] = "long"
    with pytest.raises(parasim.InputError) as e:
        parasim.load_scenario(scenario)
    assert e.value.file == "<scenario dict>" and e.value.key == "training.seq_len"
    assert json.dumps(scenario, indent=2).splitlines()[e.value.line - 1].strip().startswith('"seq_len"')


def test_whatif_keeps_the_headroom_it_is_given():
    study = parasim.whatif(LAB, vary={"cluster.nodes": [1, 2]}, headroom="70GiB", threads=1)
    text = cli_json("whatif", LAB, "--vary", "cluster.nodes=1,2", "--headroom", "70GiB", "--threads", "1", "--json")
    assert study.to_dict() == json.loads(text)
    assert study.variants[0].failure.startswith("no plan of the") and study.variants[1].fits


def test_from_log_reads_nemo_torchtitan_and_megatron_logs_as_the_cli():
    logs = ["tests/data/logs/nemo/gpt3_5b_64g.log", "tests/data/logs/torchtitan/llama3_8b_fsdp8.log",
            "tests/data/logs/megatron/h100_gpt0.7b_mb4.log"]
    report = parasim.from_log(logs, "h100-sxm5-80gb")
    assert report.logs == 3
    text = cli_json("calibrate", "from-log", *logs, "--gpu", "h100-sxm5-80gb", "--json")
    assert same_document(report.to_dict(), text)
    nemo, titan, megatron = report.to_dict()["logs"]
    assert nemo["stack"] == "NeMo" and nemo["plan"] == "tp1 pp1 dp64 mb4 sp off recompute none zero 1"
    assert nemo["predicted_iteration_s"] == 2.354099331977 and nemo["peak_counts"] == "none"
    assert titan["stack"] == "torchtitan" and megatron["stack"] == "Megatron-LM"


def test_from_log_reads_torchtitan_runs_measured_on_one_h200_as_the_cli():
    logs = ["tests/data/logs/torchtitan/h200_llama3_1b_b4_s4096.log",
            "tests/data/logs/torchtitan/h200_llama3_3b_b2_s8192_sac.log",
            "tests/data/confirm/h200-torchtitan/plan-02/node0.log"]  # torchtitan v0.2.2: JSON model arguments
    report = parasim.from_log(logs, "h200-sxm-141gb")
    text = cli_json("calibrate", "from-log", *logs, "--gpu", "h200-sxm-141gb", "--json")
    assert same_document(report.to_dict(), text)
    small, large, qwen3 = report.to_dict()["logs"]
    assert small["plan"] == "tp1 pp1 dp1 mb4 sp off recompute none zero 0" and small["gpus"] == 1
    assert abs(small["measured_iteration_s"] - 4 * 4096 / 57507.5) < 1e-4
    assert large["plan"] == "tp1 pp1 dp1 mb2 sp off recompute selective zero 0"
    assert qwen3["plan"] == "tp1 pp1 dp1 mb4 sp off recompute none zero 0" and "ffn 6144" in qwen3["model"]


def test_from_log_errors_at_the_line_that_says_why():
    with pytest.raises(parasim.InputError) as failed:
        parasim.from_log(["tests/data/logs/nemo/no_steps.log"], "h100-sxm5-80gb")
    assert failed.value.file == "tests/data/logs/nemo/no_steps.log" and failed.value.line == 68
    assert "no step timing" in failed.value.message
    with pytest.raises(parasim.InputError):
        parasim.from_log(["tests/data/logs/nemo/gpt3_5b_64g.log"], "h100", gpus_per_node=8)
    with pytest.raises(parasim.InputError):
        parasim.from_log(["tests/data/logs/nemo/gpt3_5b_64g.log"], "h100-sxm5-80gb", threads=0)


def test_selective_recompute_by_module_as_the_cli():
    overrides = ["plan.recompute=selective", "plan.recompute_modules=[mlp]"]
    result = parasim.simulate(LAB, set=overrides)
    text = cli_json("simulate", LAB, *[a for o in overrides for a in ("--set", o)], "--json")
    assert result.to_dict() == json.loads(text)
    assert result.plan.endswith("recompute selective (mlp)")
    # Rerunning the MLP costs time against the attention core alone.
    assert result.iteration_s > parasim.simulate(LAB, set=["plan.recompute=selective"]).iteration_s
    with pytest.raises(parasim.InputError) as e:
        parasim.load_scenario(LAB, set=["plan.recompute=selective", "plan.recompute_modules=[qkv]"])
    assert e.value.key == "plan.recompute_modules"


def test_eager_softmax_as_the_cli():
    gpt3 = "scenarios/jobs/gpt3-175b-1024-a100.yaml"
    unfused = parasim.simulate(gpt3, set=["training.eager_softmax=unfused"])
    assert unfused.to_dict() == json.loads(cli_json("simulate", gpt3, "--set", "training.eager_softmax=unfused", "--json"))
    # PyTorch's fp32 passes over the scores cost time against Megatron's fused kernel.
    assert unfused.iteration_s > parasim.simulate(gpt3).iteration_s
    with pytest.raises(parasim.InputError) as e:
        parasim.load_scenario(gpt3, set=["training.eager_softmax=fast"])
    assert e.value.key == "training.eager_softmax"
