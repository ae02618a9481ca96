"""A faithfulness judge with one criterion: is every claim of the answer supported by the evidence given?

`FaithfulnessJudge` calls any OpenAI-compatible Chat Completions server through the `openai` client with a
JSON-schema structured output. Its system prompt is a versioned file, `evals/judge_prompts/<version>.md`,
whose sha256 is pinned in `evals/judge_prompts/MANIFEST.json`: an edited file is refused, so a changed
prompt is a new file and a new manifest entry, and a calibration (TPR/TNR) measured for one version is never
applied to another. Without a model, `get_judge` returns the offline judge (evals/offline_judge.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.llm import ModelCallError, openai_client, structured_completion
from evals.judgement import EvidenceItem, JudgeError, Judgement
from evals.label_file import label_ids, label_key, split_for
from evals.offline_judge import LexicalBillJudge

PROMPTS_DIR = Path(__file__).resolve().parent / "judge_prompts"
MANIFEST_NAME = "MANIFEST.json"
LABELS_FILE = Path(__file__).resolve().parent / "fixtures" / "judge_labels.jsonl"
_EXAMPLE_RE = re.compile(r"^#{2,4}\s*Example\s+([\w~.-]+)\s*$", re.MULTILINE)
_PROMPT_VERSION_RE = re.compile(r"(?P<name>[a-z][a-z0-9_]*(?:-[a-z][a-z0-9_]*)*)-(?P<number>\d+)")

# The reason comes first so the model writes its check before it commits to a verdict.
RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
    },
    "required": ["reason", "verdict"],
    "additionalProperties": False,
}

ATTEMPTS = 2  # one call and one retry on an error or unreadable output



class JudgePromptError(Exception):
    """A judge prompt version that is missing, unlisted in the manifest, or edited after its release."""


@dataclass(frozen=True)
class JudgePrompt:
    version: str
    text: str
    sha256: str


def judge_prompt_versions(*, folder: Path = PROMPTS_DIR) -> list[str]:
    """Return the prompt versions (`<name>-<N>.md` files) in the folder, lowest number first."""
    found = []
    for path in folder.glob("*.md"):
        match = _PROMPT_VERSION_RE.fullmatch(path.stem)
        if match:
            found.append((int(match["number"]), match["name"], path.stem))
    return [version for _, _, version in sorted(found)]


def load_judge_prompt(version: str | None = None, *, folder: Path = PROMPTS_DIR,
                      labels: Path = LABELS_FILE) -> JudgePrompt:
    """Return the prompt of `version` (default: the highest number), refusing a file the manifest does not pin
    and one whose worked examples are not train-split labels of `labels`."""
    versions = judge_prompt_versions(folder=folder)
    if not version:
        if not versions:
            raise JudgePromptError(f"no judge prompt (<name>-<N>.md) in {folder}")
        version = versions[-1]
    if version not in versions:
        raise JudgePromptError(f"no judge prompt {version!r} in {folder}; there are: {', '.join(versions) or 'none'}")
    path = folder / f"{version}.md"
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise JudgePromptError(f"cannot read {folder / MANIFEST_NAME}: {exc}") from exc
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    pinned = manifest.get(version) if isinstance(manifest, dict) else None
    if pinned is None:
        raise JudgePromptError(f"judge prompt {version!r} is not in {MANIFEST_NAME}: add "
                               f'"{version}": "{digest}" to release it')
    if pinned != digest:
        raise JudgePromptError(
            f"judge prompt {path.name} was edited after its release (sha256 {digest[:12]}…, {MANIFEST_NAME} pins "
            f"{str(pinned)[:12]}…): a changed prompt is a new version — restore the file, save the change as a "
            f"new <name>-<N+1>.md and add its hash to {MANIFEST_NAME}")
    text = data.decode("utf-8").removesuffix("\n")  # the file ends with a newline; the prompt does not
    check_prompt_examples(text, source=path.name, labels=labels)
    return JudgePrompt(version=version, text=text, sha256=digest)


def prompt_example_ids(text: str) -> list[str]:
    """Return the label ids of a prompt's worked examples: each starts on a line "## Example <label id>"."""
    return _EXAMPLE_RE.findall(text)


def check_prompt_examples(text: str, *, source: str, labels: Path = LABELS_FILE) -> None:
    """Refuse a prompt whose worked examples are not human-labelled answers of the train split.

    A judge's examples teach it; an example from dev or test would let the judge be measured on what it was
    shown (seed 004: examples come from train, iterate on dev, read test once per version).
    """
    examples = prompt_example_ids(text)
    if not examples:
        return
    known = label_ids(labels) if labels.is_file() else set()
    for label_id in examples:
        if label_id not in known:
            raise JudgePromptError(f"{source}: example {label_id!r} is not a human label of {labels.name}")
        split = split_for(label_key(label_id))
        if split != "train":
            raise JudgePromptError(f"{source}: example {label_id!r} is in the {split} split; a judge prompt's "
                                   f"examples come from the train split only")


def build_judge_messages(*, prompt: str, answer: str, evidence: Sequence[EvidenceItem],
                         question: str = "", verified: Sequence[str] = ()) -> list[dict]:
    """Return the chat messages that put the evidence and the answer before the judge."""
    passages = "\n".join(_passage(item) for item in evidence) or "(no evidence was given)"
    asked = f"Customer question:\n{question}\n\n" if question else ""
    derived = (f"\n\nFigures the answer computed from two evidence amounts (a sum or a difference, checked): "
               f"{', '.join(verified)}" if verified else "")
    return [
        {"role": "system", "content": prompt},
        {"role": "user", "content": f"{asked}Evidence passages:\n{passages}{derived}\n\nAnswer to check:\n{answer}"},
    ]


def parse_judgement(raw: str) -> tuple[str, str]:
    """Return (verdict, reason) from the judge's JSON; raise JudgeError on anything else."""
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, TypeError) as exc:
        raise JudgeError("judge output is not JSON", raw=raw) from exc
    if not isinstance(payload, dict):
        raise JudgeError("judge output is not a JSON object", raw=raw)
    verdict, reason = payload.get("verdict"), payload.get("reason")
    if verdict not in ("pass", "fail") or not isinstance(reason, str):
        raise JudgeError("judge output does not match the verdict schema", raw=raw)
    return verdict, reason.strip()


class FaithfulnessJudge:
    """The model judge; its version is the prompt file's version (e.g. "faithfulness-1")."""

    def __init__(self, *, api_key: str, base_url: str | None, model: str, timeout: float,
                 prompt_version: str | None = None, prompts_dir: Path = PROMPTS_DIR):
        prompt = load_judge_prompt(prompt_version, folder=prompts_dir)  # refuses an edited prompt up front
        self.version, self.prompt = prompt.version, prompt.text
        # The client never retries on its own: the judge's single retry is the only one, so it is counted.
        self._client = openai_client(api_key=api_key, base_url=base_url, timeout=timeout)
        self.model = model

    def judge(self, *, answer: str, evidence: Sequence[EvidenceItem], question: str = "",
              verified: Sequence[str] = ()) -> Judgement:
        """Return the verdict on whether `evidence` supports every claim of `answer` (`verified`: figures the
        grounding verifier derived from two evidence amounts, named to the judge)."""
        messages = build_judge_messages(prompt=self.prompt, answer=answer, evidence=evidence, question=question,
                                        verified=verified)
        failure: JudgeError | None = None
        usage: dict[str, int] = {}  # every attempt's tokens count, a retried one too
        for attempt in range(1, ATTEMPTS + 1):
            try:
                raw = self._complete(messages, usage)
                verdict, reason = parse_judgement(raw)
            except JudgeError as exc:
                failure = exc
                continue
            return Judgement(verdict=verdict, reason=reason, judge_version=self.version, model=self.model,
                             attempts=attempt, raw=raw, usage=tuple(sorted(usage.items())))
        raise JudgeError(f"no verdict after {ATTEMPTS} attempts: {failure}", raw=failure.raw,
                         attempts=ATTEMPTS, usage=usage)

    def _complete(self, messages: list[dict], usage: dict[str, int]) -> str:
        try:
            raw, call_usage = structured_completion(self._client, model=self.model, messages=messages,
                                                    schema_name="faithfulness_verdict", schema=RESPONSE_SCHEMA)
        except ModelCallError as exc:
            raise JudgeError(f"judge call failed: {exc}") from exc
        for key in ("prompt_tokens", "completion_tokens"):
            if isinstance((call_usage or {}).get(key), int):
                usage[key] = usage.get(key, 0) + call_usage[key]
        return raw



def get_judge() -> FaithfulnessJudge | LexicalBillJudge:
    """Return the model judge when a model is configured (JUDGE_MODEL, else OPENAI_MODEL), the offline one otherwise."""
    from django.conf import settings

    if not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
        return LexicalBillJudge()
    model = getattr(settings, "JUDGE_MODEL", None) or settings.OPENAI_MODEL
    return FaithfulnessJudge(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL, model=model,
                             timeout=settings.OPENAI_TIMEOUT_S,
                             prompt_version=getattr(settings, "JUDGE_PROMPT_VERSION", "") or None)


def _passage(item: EvidenceItem) -> str:
    value = getattr(item, "value", None)
    return f"[{item.id}] {item.text}" + (f" (value: {value})" if value not in (None, "") else "")
