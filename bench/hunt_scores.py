"""What the hunt-score benches (mutation_score, driver_score) share: reading a duration as
locklab does, finding a hunt's directory in its output, and summing up times to kill."""


def seconds(text):
    """'5m', '90s', '500ms', '300' -> seconds, as locklab reads a duration (a bare number is ms)."""
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text) / 1000


def hunt_dir(stdout):
    """The hunt's directory, from its last line `hunt: DIR/hunt.md (...)`; None when absent."""
    for line in stdout.splitlines():
        if line.startswith("hunt: ") and "/hunt.md" in line:
            return line.split("hunt: ", 1)[1].split("/hunt.md")[0]
    return None


def kill_times(hunts, budget_s):
    """Median and maximum time to kill over every hunt, a survivor (or a kill past the
    budget) counted as slower than any kill; the maximum is over the kills within budget."""
    times = sorted(h["time_to_kill_s"] if h.get("killed") and h["time_to_kill_s"] <= budget_s
                   else float("inf") for h in hunts)
    if not times:
        return None, None
    n = len(times)
    mid = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
    kills = [t for t in times if t != float("inf")]
    return mid, (max(kills) if kills else None)


def fmt_s(t):
    return "none" if t is None else ("beyond the budget" if t == float("inf") else f"{t:.0f} s")


def kill_time_summary(hunts, budget_s, result, prefix=""):
    """Sets result[PREFIX + "median_time_to_kill_s"] and [PREFIX + "max_time_to_kill_s"]
    (kill_times; a median beyond the budget is null) and returns the line to print."""
    med, most = kill_times(hunts, budget_s)
    result[prefix + "median_time_to_kill_s"] = None if med == float("inf") else med
    result[prefix + "max_time_to_kill_s"] = most
    return f"hunt: time to kill, median {fmt_s(med)}, maximum {fmt_s(most)}"
