"""The short table a device call's reply ends with, from what benchmarks/gpu_device_check.sh wrote to $OUT.

    python benchmarks/gpu_device_summary.py $OUT
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def pytest_lines(out: Path) -> list[str]:
    xml = out / "gpu_pytest.xml"
    if not xml.exists():
        return ["gpu tests: no report"]
    text = xml.read_text(errors="replace")
    suite = re.search(r"<testsuite [^>]*>", text)
    lines = [f"gpu tests: {suite.group(0)[:200] if suite else 'no testsuite'}"]
    for case in re.finditer(r'<testcase [^>]*name="([^"]+)"[^>]*?(/>|>(.*?)</testcase>)', text, re.S):
        body = case.group(3) or ""
        state = "FAILED" if "<failure" in body or "<error" in body else "skipped" if "<skipped" in body else "ok"
        detail = re.search(r'message="([^"]{0,160})', body)
        lines.append(f"  {state:7} {case.group(1)[:90]} {detail.group(1) if detail and state != 'ok' else ''}")
    return lines


def main(out: Path) -> None:
    lines = pytest_lines(out)
    run = load(out / "paper_run.json")
    lines.append(f"paper run: {run.get('steps')} steps, {run.get('wall_s')} s end to end (loop "
                 f"{run.get('train_seconds')} s, start-up and end {run.get('startup_and_end_s')} s, "
                 f"{run.get('dev_evaluations')} dev evaluations, path {run.get('step_path', {}).get('path')}); "
                 f"projected {run.get('projection_s')} s, x{run.get('measured_over_projected')}; rc "
                 f"{run.get('returncode')} {run.get('stopped_at', '')} "
                 f"{run.get('stderr_tail', '')[-300:] if run.get('returncode') else ''}")
    cal = load(out / "calibration.json")
    done = {k: v for k, v in (cal.get("settings") or {}).items() if v.get("ms")}
    for key, g in (cal.get("glue") or {}).items():
        lines.append(f"  GLUE {key}: {g.get('ms')} ms at width {g.get('width')} ({g.get('path')}) {g.get('error', '')}")
    lines.append(f"calibration: {len(done)} of {len(cal.get('settings') or {})} settings, "
                 f"{cal.get('measured_share_of_hours')} of the hours, {cal.get('seconds')} s")
    for k, v in (cal.get("settings") or {}).items():
        lines.append(f"  {k}: {v.get('ms')} ms {v.get('path')} start-up {v.get('startup_s')} peak "
                     f"{v.get('peak_memory_gib')} {v.get('skipped', '')} {str(v.get('error', ''))[:160]}")
    glue = load(out / "glue_eval.json")
    lines.append(f"glue/eval: {json.dumps({k: v for k, v in glue.items() if k != 'args'})[:1500]}")
    conc = load(out / "concurrency.json")
    lines.append(f"concurrency (mps {conc.get('args', {}).get('mps')}):")
    for config, rows in conc.items():
        if isinstance(rows, list):
            lines.append(f"  {config}: " + "; ".join(
                f"k={r['k']} {r.get('aggregate_steps_per_s')} steps/s x{r.get('vs_one_run')} runs/h "
                f"x{r.get('runs_per_hour_vs_one')} {r.get('skipped', '')}{r.get('errors') or ''}" for r in rows))
    for cache, r in load(out / "compile.json").items():
        log = r.get("log_elapsed") or []
        lines.append(f"compile {cache}: wall {r.get('wall_s')} s, loop {r.get('train_seconds')} s, first log "
                     f"{log[:2]}, last {log[-1:]}, path {r.get('step_path', {}).get('path')} rc {r.get('returncode')}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
