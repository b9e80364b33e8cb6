"""The model endpoint bound to one attempt: base URL, key and model, a stdlib chat helper, an ``openai`` client.

Every call through ``base_url`` (``/v1/rollouts/<id>/attempts/<n>/llm/v1``) is recorded by the
gateway with its token ids and logprobs and tagged with the attempt, whatever client makes it; once
the attempt is no longer live (its lease expired, it was handed back) the gateway answers 409.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import TransportError, problem_error


@dataclass(frozen=True)
class LLM:
    """Agent-lightning's ``LLM`` resource for one attempt: ``endpoint`` (= ``base_url``), ``model``, ``api_key``.

    ``chat(messages, **kwargs)`` posts a chat completion with the standard library and returns the
    reply as a dict; ``openai()`` returns an ``openai.OpenAI`` client bound to the attempt when the
    ``openai`` package is installed (``pip install openai``).
    """

    base_url: str
    api_key: str
    model: str
    timeout: float = 300.0
    sampling_parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def endpoint(self) -> str:
        """Agent-lightning's name for the base URL."""
        return self.base_url

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        """``POST {base_url}/chat/completions`` and the decoded answer (``choices[0].message`` …)."""
        body = {"model": self.model, **self.sampling_parameters, **kwargs, "messages": messages}
        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(), method="POST",
                                         headers={"content-type": "application/json", "authorization": f"Bearer {self.api_key}"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = {"detail": raw[:500].decode("utf-8", "replace")}
            raise problem_error(error.code, problem if isinstance(problem, dict) else {"detail": str(problem)}) from None
        except (urllib.error.URLError, OSError) as error:
            raise TransportError(f"chat completion at {self.base_url} failed: {getattr(error, 'reason', error)}") from error

    def openai(self, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client for this attempt, without client retries (the gateway retries upstream)."""
        try:
            import openai  # noqa: PLC0415 - optional dependency
        except ImportError as error:
            raise ImportError("LLM.openai() needs the openai package (pip install openai); LLM.chat() needs nothing") from error
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout, **kwargs)


def text_of(reply: dict[str, Any]) -> str:
    """The assistant text of a chat completion answer (empty when it only called tools)."""
    message: Optional[dict[str, Any]] = (reply.get("choices") or [{}])[0].get("message")
    return (message or {}).get("content") or ""
