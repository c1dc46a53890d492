"""Run the plugin's hooks exactly as Claude Code does: the command string from
hooks/hooks.json, through the shell, with CLAUDE_PLUGIN_ROOT (and CLAUDE_PLUGIN_DATA) set."""
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hook_command(event):
    spec = json.load(open(os.path.join(ROOT, "hooks", "hooks.json"), encoding="utf-8"))
    for group in spec["hooks"][event]:
        for h in group["hooks"]:
            if h.get("type", "command") == "command" and h.get("command"):
                return h["command"], h.get("timeout")
    raise LookupError("no %s command hook in hooks/hooks.json" % event)


def run_hook(event, stdin, data_dir=None, cwd=None, env_extra=None, timeout=60):
    """Returns (returncode, stdout, stderr).  stdin: dict (sent as JSON), str or bytes."""
    cmd, _ = hook_command(event)
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=ROOT)
    env.pop("CLAUDE_PLUGIN_DATA", None)
    if data_dir:
        env["CLAUDE_PLUGIN_DATA"] = data_dir
    if env_extra:
        env.update(env_extra)
    if isinstance(stdin, dict) or isinstance(stdin, list):
        stdin = json.dumps(stdin)
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8", "surrogatepass")
    p = subprocess.run(cmd, shell=True, input=stdin, capture_output=True, env=env, cwd=cwd or ROOT, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def decision(stdout):
    """'block' when stdout is a block decision, else 'allow'."""
    out = stdout.strip()
    if not out:
        return "allow"
    try:
        obj = json.loads(out)
    except ValueError:
        return "allow"
    return "block" if isinstance(obj, dict) and obj.get("decision") == "block" else "allow"
