"""An Atari agent whose episode reward is still at the random-policy level after many timesteps: not learning.

A chance level for RL: every Atari game has a published score of a uniformly random policy and one of a human
tester (Mnih et al. 2015, "Human-level control through deep reinforcement learning", Nature 518, Extended Data
Table 2). An agent whose mean episode reward sits within 5 % of the random-to-human gap above the random score
after at least MIN_TIMESTEPS environment steps has learned nothing its rewards show (Pong's -20.7: the agent never
returns the ball). The game comes from the run's own text (an `--env-name PongNoFrameskip-v4`, `env_id:
ALE/Pong-v5` in a command line, config or log); the reward and the timestep count from the progress lines of
ikostrikov's pytorch-a2c-ppo-acktr (`Updates %d, num timesteps %d, FPS %d ... mean/median reward %.1f/%.1f`),
OpenAI baselines / Stable-Baselines (`eprewmean`, `ep_rew_mean`, `total_timesteps`) and RLlib
(`episode_reward_mean`, `timesteps_total`). Without a timestep count nothing is said: every run starts at the
random level.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.trajectory_stats import few_words, fmt, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line

# game: (random policy, human tester), Mnih et al. 2015, Extended Data Table 2
SCORES = {"pong": (-20.7, 9.3), "breakout": (1.7, 31.8), "spaceinvaders": (148.0, 1652.0),
          "seaquest": (68.4, 20182.0), "qbert": (163.9, 13455.0), "mspacman": (307.3, 15693.0),
          "freeway": (0.0, 29.6), "boxing": (0.1, 4.3), "asteroids": (719.1, 13157.0),
          "beamrider": (363.9, 16926.5)}
NEAR = 0.05  # of the random-to-human gap
MIN_TIMESTEPS = 100_000
MAX_LINES = 200_000
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
_ENV = lazy_re(r"(?i)(?:ALE/)?(" + "|".join(SCORES) + r")(?:NoFrameskip|Deterministic)?-v\d")
_REWARD = lazy_re(r"(?i)(?:mean/median reward\s+|eprewmean\W+|ep_rew_mean\W+|episode_reward_mean\W+)" + _NUM)
_STEPS = lazy_re(r"(?i)(?:num timesteps|total_timesteps|timesteps_total)\W+(\d+)")


def _scan(bundle: Bundle) -> Tuple[Optional[str], List[Tuple[Line, float, Optional[int]]]]:
    game: Optional[str] = None
    rows: List[Tuple[Line, float, Optional[int]]] = []
    steps: Optional[int] = None
    for i, line in enumerate(bundle.all_lines()):
        if i >= MAX_LINES:
            break
        text = line.text[-2000:]
        if game is None and "-v" in text:
            m = _ENV.search(text)
            if m is not None:
                game = m.group(1).lower()
        low = text.lower()
        if "rew" not in low and "timesteps" not in low:
            continue
        s = _STEPS.search(text) if "timesteps" in low else None
        if s is not None:
            steps = int(s.group(1))
        r = _REWARD.search(text) if "rew" in low else None
        if r is not None:
            rows.append((line, float(r.group(1)), steps))
    return game, rows


def detect(bundle: Bundle) -> List[Finding]:
    game, rows = _scan(bundle)
    if game is None or not rows:
        return []
    line, reward, steps = rows[-1]
    if steps is None or steps < MIN_TIMESTEPS:
        return []
    rnd, human = SCORES[game]
    if reward > rnd + NEAR * (human - rnd):
        return []
    n = len(rows)
    claim = (f"the mean episode reward is {fmt(reward)} after {steps:,} timesteps ({line.source().cite()}): "
             f"{game}'s random-policy score is {fmt(rnd)} and a human's {fmt(human)}, so the agent has learned "
             "nothing its rewards show" + few_words(n))
    return [Finding("metric.rl-reward-at-random-level", claim, DIRECT, points_confidence(n, 0.7), [line.source()],
                    suggests="stall", role="symptom", stage="runtime", kind="plateau", verify_skill="init-loss-check",
                    fixes=["check the environment wrappers the agent sees (frame skip, reward clipping, "
                           "episodic-life, the observation the policy gets) against a known-good run of the same "
                           "code on this game",
                           "run the same code on a game it is known to learn quickly (e.g. Breakout or Seaquest): "
                           "if that learns, the game's install or wrappers are the suspect",
                           "check that the optimizer steps (lr > 0, the policy's parameters are in it) and that "
                           "the policy entropy falls from its uniform maximum ln(actions)"],
                    meaning="An agent that scores what a uniformly random policy scores, after this many "
                            "environment steps, is not learning: the reward signal, the observations or the "
                            "updates do not reach the policy.")]
