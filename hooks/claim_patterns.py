"""The claim model's patterns (hooks/claim_detector.py reads them): readings, sentence splits, explaining and
instructing replies, replies that say the cause is unknown, conditionals, alternatives, general questions, prompts
that report a failure. Standard library only."""
import re

# A reading written in prose: a number with two or more decimals (0.3817, 2.3026, ~0.348), not a version (1.13.1).
READING = re.compile(r"(?<![\w.~≈+±−])(~|≈|(?:about|around|roughly|approximately|approx\.?|nearly|almost) )?\s?"
                      r"(?<![+±−])(?<![+±−-] )(\d+\.\d{2,})(?![\w]|\.\d)")  # (+0.04, − 0.04: the reply's arithmetic)

SENT_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])")

CONSEQUENCE = re.compile(r"(?:,|;|\u2014|\band)\s+(?:so|thus|hence|therefore|which\s+(?:means|makes|made|"
                         r"causes|caused|leads|led|drives|drove|pushes|pushed|sends|sent|blows|blew|kills|killed|"
                         r"triggers|triggered))\b|\s(?:→|->|=>)\s")

SINCE = re.compile(r"\bsince\s+(?!step|epoch|iter|the (?:start|beginning|last|first)|then|yesterday|last|\d)")

RELATIVE = re.compile(r",\s*which\s")

PAREN = re.compile(r"\([^()]*\)|（[^（）]*）")

# A reply that explains, in any position: a connective or an identification ("that's the ...", "it's the ..."), an
# evaluation of a setting ("too high", "misconfigured", "mismatch"), a causal verb.  With no word of this kind and no
# instruction to change something, a reply says only what happened.
EXPLAIN = re.compile(
    r"\b(?:so|since|thus|hence|therefore|because|cause[sd]?|causing|due|i\.e|meaning|means|leads?|led|makes?|made|"
    r"triggers?|triggered|results?|resulted|explains?|reason|why|stems?|comes from|came from)\b|"
    r"\b(?:that's|thats|that is|that was|it's|its|this is|this was|it is|it was|that one is|this one is|"
    r"that one was|this one was) (?:the|your|a|an|just)\b|→|->|=>|"
    r"\bfound (?:it|the (?:problem|bug|issue|cause|culprit))\b|"
    r"\btoo (?:high|low|large|small|big|long|short|aggressive|many|few|much|little)\b|misconfigur|mismatch|"
    r"\b(?:wrong|broken|corrupt\w*|overflows?|overflowed|blows? up|blew up|explod\w*|starv\w*|leak\w*|twice|"
    r"off by)\b")

EXPLAIN_CJK = ("原因", "因为", "所以", "导致", "由于", "ため", "から", "せい", "原因", "때문", "그래서", "그렇습니다",
                "원인", "причин", "потому", "поэтому", "из-за", "motivo", "razón", "raison", "grund", "deshalb",
                "darum", "daher", "foi isso", "por isso", "por eso", "c'est pour", "è per", "perciò", "quindi",
                "weil", "parce", "porque", "perché", "debido", "à cause", "wegen", "kommt durch", "kommt von",
                "liegt an", "zu hoch", "zu niedrig", "trop élevé",
                "demasiado", "troppo", "слишком", "太高", "太大", "高すぎ", "大きすぎ", "너무")

INSTRUCTION = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:set|lower|raise|reduce|increase|decrease|add|remove|drop|pad|resize|switch|enable|"
    r"disable|replace|fix|clip|halve|bump|upgrade|downgrade|pin|limit|shrink|change|freeze|unfreeze|shorten)\b")

# A sentence that says the cause is not known: the reply around it reports, it does not explain.
UNKNOWN_CAUSE = re.compile(r"\b(?:doesn't|does not|don't|do not|can't|cannot|won't|isn't|is not|no way to) "
                            r"(?:yet )?(?:say|show|tell|know|see|explain|reveal|determine)\w* (?:yet )?(?:what|why|which|"
                            r"the cause|the reason)\b|\bnot (?:clear|obvious|known|visible) (?:yet )?(?:what|why)\b|"
                            r"\b(?:root )?cause (?:is |was |remains |still )*(?:not (?:yet )?(?:known|clear|investigated|"
                            r"determined|identified|confirmed|established)|unknown|unclear|undetermined|tbd)\b(?!-)|"
                            r"\b(?:haven't|have not|hasn't|has not|didn't|did not) (?:yet )?(?:found|identified|determined|"
                            r"investigated|pinned down) (?:the |a )?(?:root )?cause\b")

COMPOUND = re.compile(r"\b(?:rarely|seldom|often|usually|commonly|frequently|typically|generally|sometimes|"
                       r"possibly|probably)-\w+", re.I)

CONDITIONAL = re.compile(r"^\W*(?:if|unless|otherwise|when|in case|wenn|falls|si|se|sinon|如果|もし|만약)\b")

ALTERNATIVE = re.compile(r"^\W*(?:another|a (?:second|third|fourth)|alternatively|or else|a further|also possible|"
                          r"the other|otherwise|或者|另一|もう一つ|또는|sinon|alternativ|otra|outra|un'altra)")

# A general question: it asks how things work, not why this run failed ("why do people use loss scaling?", "in
# general, is bf16 safer?").  Its answer explains, but states no cause of a failure of the user's.
GENERAL = re.compile(r"\b(?:in general|generally|people|usually|typically|normally|in theory|difference between|"
                      r"how does|how do|what is a|what's a|what are|is it true|best practice|rule of thumb|everyone|everybody|"
                      r"general question|conceptually|explain what|explain how|what does|what do|what's|what is)\b|"
                      r"en général|générale|on dit|im allgemeinen|generell|allgemeine frage|man sagt|en general|se dice|"
                      r"in generale|dicono|em geral|в целом|говорят|一般|大家|みんな|일반적")

MINE = re.compile(r"\b(?:my|mine|our|i|we|i'm|we're|i've|we've|me|us)\b|```|traceback|\bstep \d|"
                   r"[\w.-]+/[\w.-]+|\.(?:log|out|err|txt|json|jsonl|csv|ya?ml)\b|\b(?:logs?|job|exp\d+)\b|"
                   r"\b(?:this|the|that) (?:run|job|training|model|loss|log|crash|error)\b|"
                   r"\bmein|\bunser|\bmon |\bma |\bmes |\bnotre|\bmi |\bmis |\bnuestro|\bmeu|\bminha|\bil mio|"
                   r"\bla mia|мой|моя|мои|наш|我的|我们|私の|僕の|내 |제 |우리")

# ... and a question about a failure that happened is not general ("what's the root cause?", "what went wrong?")
FAILED = re.compile(r"\b(?:cause|root|reason|wrong|happened|happening|going on|fail\w*|crash\w*|died|dies|broke|"
                     r"killed|hung|stuck|diverged|nan|oom|error)\b")

CAUSE_QUESTION = ("why", "cause", "reason", "what happened", "what went wrong", "what's wrong", "whats wrong",
                   "what is wrong", "explain", "root", "what killed", "what broke", "diagnos", "warum", "wieso",
                   "weshalb", "ursache", "pourquoi", "por qué", "porque", "por que", "causa", "perché",
                   "motivo", "почему", "причин", "为什么", "为何", "原因", "怎么回事", "なぜ", "どうして",
                   "왜", "원인", "이유")

PASTED_FRAME = re.compile(r'file "[^"\n]*(?:torch|transformers|lightning|deepspeed|accelerate|jax|keras|tensorflow|'
                           r'megatron|fairseq|ultralytics|peft|trl)[^"\n]*", line \d+')
