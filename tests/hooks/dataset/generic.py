"""Cases that are not tied to one failure scenario: ordinary coding answers, stop_hook_active,
long and huge messages, broken transcripts, huge transcripts and turn-structure corner cases."""

CODING = [
    # (prompt, reply, tool call or None)
    ("why are my date tests failing?",
     "The tests fail because `parse_date` returns a naive datetime while the fixture compares against an aware one. "
     "I added `tzinfo=timezone.utc` in the parser and all 42 tests pass now.",
     ("Bash", {"command": "pytest tests/test_dates.py -q"}, "42 passed in 0.31s", None)),
    ("user.name is undefined in the profile page, why?",
     "The root cause is a missing `await`: `fetchUser()` returns a Promise, so `user.name` is undefined when the "
     "component renders. Await it in the effect, or render a loading state until it resolves.", None),
    ("why does my function keep appending to the same list across calls?",
     "This happens because Python evaluates default arguments once, at function definition time, so every call "
     "shares the same list. Use `None` as the default and create the list inside the function.", None),
    ("GET /api/items/ returns 404 but /api/items works",
     "The 404 is caused by the trailing slash: the Flask route is declared as `/api/items` and `strict_slashes` "
     "is on, so `/api/items/` doesn't match. Either declare the route with the slash or set "
     "`strict_slashes=False`.", None),
    ("my regex matches too much",
     "The culprit is the greedy `.*`: it runs to the last quote on the line. Use the lazy `.*?` or a negated "
     "class like `[^\"]*`.", None),
    ("why is the docker build so slow every time?",
     "Your build is slow because `COPY . .` comes before `pip install -r requirements.txt`, so any source change "
     "invalidates the dependency layer. Copy requirements.txt first, install, then copy the rest.", None),
    ("the dashboard leaks memory when I switch tabs",
     "The leak is due to the resize listener that's added in `componentDidMount` and never removed. Remove it in "
     "`componentWillUnmount`.",
     ("Read", {"file_path": "src/Dashboard.jsx"}, "componentDidMount() {\n  window.addEventListener('resize', "
      "this.onResize);\n}", None)),
    ("pourquoi le test d'intégration échoue en CI ?",
     "Le test échoue parce que la variable d'environnement `DATABASE_URL` n'est pas définie dans la CI ; en local "
     "elle vient de ton fichier `.env`.", None),
    ("为什么 df.map 报错？",
     "这个错误是因为 `pandas` 的版本太旧（1.5），`DataFrame.map` 是 2.1 才加入的。升级 pandas 或者改用 `applymap`。",
     None),
    ("warum hängt mein Skript manchmal?",
     "Der Fehler kommt daher, dass `requests.get` ohne Timeout aufgerufen wird; wenn der Server nicht antwortet, "
     "wartet das Skript unbegrenzt. Setze `timeout=10`.", None),
    ("the layout breaks on mobile",
     "The grid collapses because the container is `display: inline-block`, so `grid-template-columns` is ignored. "
     "Make it `display: grid`.", None),
    ("why does git say my branch diverged?",
     "Because you rebased locally after pushing: the remote still has the old commits, and your branch now has "
     "rewritten copies of them. `git push --force-with-lease` if nobody else uses the branch.", None),
    ("rename train_step to training_step in the lightning module",
     "Done. I renamed `train_step` to `training_step` because Lightning only calls a method with that exact name, "
     "and updated the two call sites in tests/test_module.py.",
     ("Edit", {"file_path": "src/module.py", "old_string": "def train_step", "new_string": "def training_step"},
      "The file src/module.py has been updated.", None)),
    ("add a --seed flag to train.py",
     "Added `--seed` (default 0) to train.py; it seeds `random`, `numpy` and `torch` before the model is built. "
     "The smoke test passes: `python train.py --seed 1 trainer.max_steps=2` finished in 14 s.",
     ("Bash", {"command": "python train.py --seed 1 trainer.max_steps=2"}, "step 0 loss=2.3051\nstep 1 loss=2.2987\n"
      "done in 14.2s", None)),
    ("write a haiku about autumn",
     "Red leaves drift and fall\ncold wind hums through empty trees\nthe year exhales slow", None),
    ("explain what gradient clipping does",
     "Gradient clipping rescales the gradient when its norm exceeds a threshold, so a single bad batch can't push "
     "the weights too far. In PyTorch: `torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)` after "
     "`loss.backward()` and before `optimizer.step()`.", None),
    ("what's the difference between bf16 and fp16?",
     "Both are 16-bit floats. fp16 has 5 exponent bits, so its range tops out at 65504; bf16 has 8 exponent bits, "
     "the same range as fp32, with less precision. That range is why bf16 rarely needs loss scaling.", None),
]

LONG_BACKGROUND = (
    "Some background first, since this run combines several things that interact. The model is trained in "
    "mixed precision, which keeps a master copy of the weights in fp32 and runs most matmuls in 16-bit. The "
    "optimizer is AdamW with decoupled weight decay. The schedule is a linear warmup followed by cosine decay. "
    "Data comes from a streaming dataset with 16 workers per rank and a prefetch factor of 2. Evaluation runs "
    "every 2000 steps on a held-out shard. Checkpoints are written every 1000 steps to local NVMe and copied to "
    "object storage asynchronously.\n\n")


def _long(parts, n=4):
    return LONG_BACKGROUND * n + parts


def build(add, scenarios, Transcript, run_probes):
    nan, oom, nccl = scenarios.NAN_LR, scenarios.OOM_BATCH, scenarios.NCCL_TIMEOUT

    # ----------------------------------------------------------- ordinary coding answers
    for i, (prompt, reply, tool) in enumerate(CODING):
        t = Transcript(seed="code%d" % i)
        t.prompt(prompt)
        if tool:
            run_probes(t, [tool])
        t.say(reply)
        add("coding", "allow", "not about a training failure" + (" (tool ran)" if tool else ""), t, reply)

    # ----------------------------------------------------------- stop_hook_active
    for i, m in enumerate([nan["backed"][0], oom["fabricated"][0], "The root cause is a learning rate that is too "
                           "high.", nccl["misquoted"][0]]):
        t = Transcript(seed="active%d" % i)
        t.prompt(nan["prompt"])
        t.say("The root cause is the learning rate.")
        t.hook_feedback("trainwreck evidence guard: this reply states a cause ... /trainwreck:debug ...")
        t.say(m)
        add("stop-hook-active", "allow", "second stop after a block: never block again", t, m, active=True)

    # after a block the model probes and claims with evidence; stop_hook_active false (e.g. other hook blocked)
    t = Transcript(seed="afterblock")
    t.prompt(nan["prompt"])
    t.say("The root cause is the learning rate.")
    t.hook_feedback("trainwreck evidence guard: ... /trainwreck:debug ...")
    run_probes(t, nan["probes"])
    t.say(nan["backed"][2])
    add("turn-structure", "allow", "isMeta hook feedback inside the turn; probes ran after it", t, nan["backed"][2])

    t = Transcript(seed="afterblock2")
    t.prompt(nan["prompt"])
    t.say("The root cause is the learning rate.")
    t.hook_feedback("trainwreck evidence guard: ... /trainwreck:debug ...")
    t.say("Understood. The root cause is the learning rate: 3e-3 without warmup diverges.")
    add("turn-structure", "block", "hook feedback is not a new prompt; still no tool in the turn", t,
        "Understood. The root cause is the learning rate: 3e-3 without warmup diverges.")

    # ----------------------------------------------------------- turn structure
    m = "The root cause is the learning rate: grad_norm explodes from step 1110 and the loss is NaN at step 1170."
    t = Transcript(seed="prevturn")
    t.prompt("show me the end of runs/exp1/train.log")
    run_probes(t, nan["probes"][:2])
    t.say("Here are the last lines; the loss is NaN from step 1170.")
    t.end_turn()
    t.prompt("so what's the root cause?")
    t.say(m)
    add("turn-structure", "block", "tools ran in the previous turn only", t, m)

    t = Transcript(seed="quote-earlier")
    t.prompt("show me the end of runs/exp1/train.log")
    run_probes(t, nan["probes"][:2])
    t.say("Here are the last lines.")
    t.end_turn()
    t.prompt("and the config?")
    run_probes(t, nan["probes"][2:])
    m2 = ("With `lr: 3.0e-03` and `gradient_clip_val: null`, the root cause is clear: the update at `step 1120 "
          "loss=4.8821 lr=3.0e-03 grad_norm=311.5` is unbounded and the run diverges.")
    t.say(m2)
    add("turn-structure", "allow", "quotes a line printed in an earlier turn of the session; a tool ran now", t, m2)

    t = Transcript(seed="todo")
    t.prompt(nan["prompt"])
    t.tool("TodoWrite", {"todos": [{"content": "find root cause", "status": "in_progress"}]},
           "Todos have been modified successfully.")
    t.tool("Skill", {"skill": "trainwreck:debug"}, "Launching skill: trainwreck:debug")
    t.say(m)
    add("turn-structure", "block", "only bookkeeping tools (TodoWrite, Skill) ran", t, m)

    t = Transcript(seed="toolerr")
    t.prompt(nan["prompt"])
    t.tool("Read", {"file_path": "runs/exp1/train.log"},
           "<tool_use_error>File does not exist.</tool_use_error>", is_error=True, stdout=False)
    t.say(m)
    add("turn-structure", "block", "the only tool call failed without output", t, m)

    t = Transcript(seed="subagent")
    t.prompt(nan["prompt"])
    report = ("[Subagent hand-back] The report follows:\nrunning: grep -n nan runs/exp1/train.log\n"
              "118:step 1170 loss=nan lr=3.0e-03 grad_norm=nan\nconfig: lr: 3.0e-03, warmup_steps: 0")
    t.tool("Agent", {"subagent_type": "trainwreck:failure-diagnoser", "prompt": "diagnose runs/exp1"}, report,
           stdout=False)
    m3 = "The subagent found `118:step 1170 loss=nan lr=3.0e-03 grad_norm=nan`; the root cause is lr 3e-3 with no warmup."
    t.say(m3)
    add("turn-structure", "allow", "evidence came back from a subagent", t, m3)

    t = Transcript(seed="pasted")
    pasted = ("my run died, here's the end of the log:\n\nTraceback (most recent call last):\n  File \"train.py\", line "
              "88, in <module>\n    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 "
              "GiB. GPU 0 has a total capacity of 39.39 GiB of which 1.91 GiB is free.")
    t.prompt(pasted)
    run_probes(t, [("Bash", {"command": "grep -n batch_size configs/train.yaml"}, "5:batch_size: 64", None)])
    m4 = ("Your traceback ends with `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB` in "
          "`loss.backward()`, and the config has `batch_size: 64`. The OOM is caused by the batch size: halve it "
          "and use gradient accumulation.")
    t.say(m4)
    add("turn-structure", "block", "quotes the log the user pasted (not tool output) plus a probe's output", t, m4)

    t = Transcript(seed="ellipsis")
    t.prompt(oom["prompt"])
    run_probes(t, oom["probes"])
    m5 = ("The OOM is due to activation memory: `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
          "2.00 GiB … 76.02 GiB already allocated; 1.12 GiB free` with batch 16 × 4096 and no checkpointing.")
    t.say(m5)
    add("turn-structure", "allow", "ellipsis-trimmed quote", t, m5)

    t = Transcript(seed="rounded")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    m6 = ("The root cause is divergence from lr 3e-3: the loss climbs from `2.41` at step 1090 to `41.0` at step "
          "1140 while grad_norm reaches `1.2e5`.")
    t.say(m6)
    add("turn-structure", "allow", "numbers quoted rounded, not changed", t, m6)

    t = Transcript(seed="split")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"], thinking="Let me look for the first NaN and the config.")
    t.assistant([{"type": "thinking", "thinking": "grad_norm explodes first.", "signature": "sigx"},
                 {"type": "text", "text": "Summary first."},
                 {"type": "text", "text": nan["backed"][2]}])
    add("turn-structure", "allow", "final reply split over several records (thinking + two text blocks)", t,
        "Summary first.\n" + nan["backed"][2])

    t = Transcript(seed="nolast")
    t.prompt(nan["prompt"])
    t.say("The root cause is the learning rate: 3e-3 with no warmup makes the loss diverge to NaN.")
    add("turn-structure", "block", "payload has no last_assistant_message; the hook reads it from the transcript", t,
        None, payload_over={"last_assistant_message": None})

    t = Transcript(seed="nolast2")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    t.say(nan["backed"][0])
    add("turn-structure", "allow", "no last_assistant_message, backed reply in the transcript", t, None,
        payload_over={"last_assistant_message": None})

    # ----------------------------------------------------------- long messages
    claim_tail = ("\n\n## Root cause\nThe run diverges because the learning rate of 3e-3 is far too high for a "
                  "model of this size without warmup, and nothing clips the gradient.")
    t = Transcript(seed="long1")
    t.prompt(nan["prompt"])
    m7 = _long(claim_tail)
    t.say(m7)
    add("long", "block", "long reply, the claim is at the end, nothing ran", t, m7)

    t = Transcript(seed="long2")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    m8 = _long("\n\n" + nan["backed"][1], 5)
    t.say(m8)
    add("long", "allow", "long backed report", t, m8)

    t = Transcript(seed="long3")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    m9 = _long("\n\n" + nan["backed"][1] + "\n\nAlso relevant, from the log: `step 1165 loss=nan lr=3.0e-03 "
               "grad_norm=nan` is the first NaN.", 5)
    t.say(m9)
    add("long", "block", "long backed report with one fabricated step deep inside", t, m9)

    m10 = _long("\n\nI can't tell yet which of these is behind your NaN. Here is how I would narrow it down:\n"
                "1. Find the first non-finite step: `grep -n -i -m1 nan runs/exp1/train.log`.\n"
                "2. Look at grad_norm for the 50 steps before it. Steady growth would point at the optimizer; a "
                "single jump at one batch would point at the data.\n3. Check precision and clipping in the config.\n"
                "4. Rerun from the last good checkpoint with clipping on, as a control.\n\nShall I start with step 1?",
                3)
    t = Transcript(seed="long4")
    t.prompt(nan["prompt"])
    t.say(m10)
    add("long", "allow", "long plan, hypotheses only", t, m10)

    big_log = "".join("step %d loss=%.4f lr=3.0e-03 grad_norm=%.2f\n" % (s, 2.4 + s * 1e-5, 1.5 + (s % 9) * 0.1)
                      for s in range(0, 1200))
    t = Transcript(seed="huge-msg")
    t.prompt(nan["prompt"])
    t.tool("Bash", {"command": "cat runs/exp1/train.log"}, big_log)
    m11 = ("Here is the full log I read:\n```\n" + big_log + "```\nThe root cause is the learning rate: `%s` is "
           "where it starts." % big_log.splitlines()[-1])
    t.say(m11)
    add("long", "allow", "very long reply (50 KB of pasted log) with backed quotes", t, m11)

    # ----------------------------------------------------------- broken input
    m12 = "The root cause is a learning rate that is too high."
    t = Transcript(seed="partial")
    t.prompt(nan["prompt"])
    t.say(m12)
    add("broken", "block", "transcript ends in a partial line; the rest is readable and shows no tool", t, m12,
        extra={"partial_tail": '{"parentUuid": "x", "isSidechain": false, "message": {"id": "msg_9", "content": '
                               '[{"type": "text", "text": "The root cause is a lea'})

    t = Transcript(seed="partial2")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    t.say(nan["backed"][0])
    add("broken", "allow", "partial last line after a backed reply", t, nan["backed"][0],
        extra={"partial_tail": '{"type": "system", "subtype": "stop_hook_summ'})

    add("broken", "allow", "transcript file does not exist: fail open", None, m12, tkind={"kind": "missing"})
    add("broken", "allow", "transcript_path is a directory: fail open", None, m12, tkind={"kind": "directory"})
    add("broken", "allow", "transcript is not JSONL: fail open", None, m12,
        tkind={"kind": "raw", "text": "\x00\x01garbage \xff not json\n" * 50})
    add("broken", "allow", "transcript is empty: fail open", None, m12, tkind={"kind": "raw", "text": ""})
    add("broken", "allow", "stdin is not JSON: fail open", None, m12, stdin="{not json at all")
    add("broken", "allow", "stdin is a JSON list: fail open", None, m12, stdin='[{"stop_hook_active": false}]')
    add("broken", "allow", "transcript_path is a number: fail open", None, m12, payload_over={"transcript_path": 42})
    add("broken", "allow", "transcript_path missing from the payload: fail open", None, m12,
        payload_over={"transcript_path": None})
    t = Transcript(seed="badtypes")
    t.prompt(nan["prompt"])
    t.say("ok")
    add("broken", "allow", "last_assistant_message has the wrong type and the transcript's reply is no claim", t,
        None, payload_over={"last_assistant_message": ["The root cause is the lr."]})

    # ----------------------------------------------------------- huge transcripts
    t = Transcript(seed="huge1")
    t.prompt(nan["prompt"])
    t.say(m12)
    add("huge", "block", "30 MB of earlier turns, then an unbacked claim", t, m12, extra={"filler_mb": 30})

    t = Transcript(seed="huge2")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    t.say(nan["backed"][0])
    add("huge", "allow", "30 MB of earlier turns, then a backed claim", t, nan["backed"][0], extra={"filler_mb": 30})

    t = Transcript(seed="huge3")
    t.prompt(nan["prompt"])
    t.tool("Bash", {"command": "cat runs/exp1/train.log"}, "@@BIG@@step 1170 loss=nan lr=3.0e-03 grad_norm=nan\n")
    m13 = "The root cause is divergence: the log ends with `step 1170 loss=nan lr=3.0e-03 grad_norm=nan`."
    t.say(m13)
    add("huge", "allow", "the turn itself (a 12 MB tool output) is larger than the read cap: fail open", t, m13,
        extra={"expand": {"@@BIG@@": ["step 10 loss=2.5000 lr=3.0e-03 grad_norm=1.00\n", 250000]}})

    t = Transcript(seed="huge4")
    t.prompt(nan["prompt"])
    run_probes(t, nan["probes"])
    m14 = "The root cause is divergence: the log shows `step 1180 loss=nan lr=3.0e-03 grad_norm=inf` first."
    t.say(m14)
    add("huge", "block", "12 MB of earlier turns; misquoted line is searched back through all of them, not found", t,
        m14, extra={"filler_mb": 12})
