"""Agent: configuration (validated at construction) plus the entry points of a run.

Prompt assembly, request building and the loop live in their own modules; this class
gathers the settings and hands them over, so each piece stays a small pure function.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, AsyncIterator, Callable, Iterator

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SkipValidation, field_validator, model_validator

from rag_core.agent.driver import adrive, drive
from rag_core.agent.events import RunCompleted, RunEvent
from rag_core.agent.loop import PreparedRun
from rag_core.agent.system_message import build_system_message
from rag_core.db.memory import InMemoryDb
from rag_core.db.protocols import SessionDb
from rag_core.errors import RagCoreError
from rag_core.knowledge.references import ReferencesFormat, user_message_with_references
from rag_core.knowledge.search_tool import search_and_record
from rag_core.knowledge.source import KnowledgeSource
from rag_core.messages import Message
from rag_core.models.base import Model
from rag_core.run_output import RunOutput
from rag_core.text import without_surrogates
from rag_core.tools.context import RunContext
from rag_core.tools.function import Function
from rag_core.tools.knowledge import SEARCH_KNOWLEDGE_FUNCTION, knowledge_search_function
from rag_core.tools.toolkit import expand_tools, toolkit_instructions


class Agent(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: Model | None = None
    name: str | None = None
    description: str | None = None
    role: str | None = None
    instructions: str | list[str] | None = None
    use_instruction_tags: bool = False
    expected_output: str | None = None
    additional_context: str | None = None
    markdown: bool = False
    add_name_to_context: bool = False
    add_datetime_to_context: bool = False
    datetime_format: str | None = None  # strftime format; without one the time reads as str(datetime)
    timezone_identifier: str | None = None  # an IANA zone, e.g. "Etc/UTC" or "Europe/Paris"
    resolve_in_context: bool = True
    system_message: str | None = None
    # a pydantic model: the API is asked for a JSON instance of it, and run outputs carry the instance
    output_schema: type[BaseModel] | None = None

    # knowledge and db are Protocols: any object with their methods will do, so pydantic does not
    # check their type (_check looks for knowledge.search, with a message saying what is missing)
    knowledge: SkipValidation[KnowledgeSource | None] = None
    search_knowledge: bool = True
    add_knowledge_to_context: bool = False
    references_format: ReferencesFormat = "json"
    knowledge_filters: dict[str, Any] | None = None

    tools: list[Any] = Field(default_factory=list)
    tool_call_limit: int | None = Field(default=None, ge=0)
    max_rounds: int = Field(default=20, ge=1)

    session_id: str | None = None
    user_id: str | None = None
    session_state: dict[str, Any] | None = None
    add_history_to_context: bool = False
    num_history_runs: int = Field(default=3, ge=1)
    db: SkipValidation[SessionDb | None] = None  # SqliteDb(...) to keep sessions across processes; in memory when None
    clock: Callable[[], datetime] | None = None

    _memory_db: InMemoryDb = PrivateAttr(default_factory=InMemoryDb)

    @property
    def _store(self) -> SessionDb:
        return self.db if self.db is not None else self._memory_db

    @field_validator("timezone_identifier")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {value!r} (use an IANA name such as 'Europe/Paris')") from None
        return value

    def _now(self) -> datetime:
        """The current time for the prompt: from the injected clock (goldens freeze it) or the
        machine's, in ``timezone_identifier`` when given (a naive clock value is read as that zone's)."""
        zone = None
        if self.timezone_identifier is not None:
            from zoneinfo import ZoneInfo

            zone = ZoneInfo(self.timezone_identifier)
        if self.clock is None:
            return datetime.now(zone)
        now = self.clock()
        if zone is None:
            return now
        return now.replace(tzinfo=zone) if now.tzinfo is None else now.astimezone(zone)

    @model_validator(mode="after")
    def _check(self) -> Agent:
        if self.add_knowledge_to_context and self.knowledge is None:
            raise ValueError("add_knowledge_to_context=True needs knowledge=Knowledge(...)")
        if self.knowledge is not None and not callable(getattr(self.knowledge, "search", None)):
            raise ValueError("knowledge: expected an object with a search(query, max_results) method")
        self.get_tools()  # tool problems (bad entries, duplicate names) surface here, not mid-run
        return self

    # ------------------------------------------------------------------ pure views
    def _instructions(self) -> list[str]:
        if self.instructions is None:
            return []
        return [self.instructions] if isinstance(self.instructions, str) else list(self.instructions)

    @property
    def _searches_knowledge(self) -> bool:
        return self.knowledge is not None and self.search_knowledge

    def get_system_message(self) -> str | None:
        """The system message the next run will send (None when nothing applies)."""
        return self._system_message(None)

    def _system_message(self, tools: list[Function] | None) -> str | None:
        """The system message, for a run with ``tools`` (the agent's tools when None)."""
        if self.system_message is not None:
            return self.system_message
        now = self._now() if self.add_datetime_to_context else None
        return build_system_message(
            description=self.description,
            role=self.role,
            instructions=self._instructions(),
            use_instruction_tags=self.use_instruction_tags,
            markdown=self.markdown and self.output_schema is None,  # a JSON answer has no markdown
            now=now,
            datetime_format=self.datetime_format,
            name=self.name if self.add_name_to_context else None,
            tool_instructions=toolkit_instructions(self.tools),
            session_state=self.session_state,
            resolve_in_context=self.resolve_in_context,
            expected_output=self.expected_output,
            additional_context=self.additional_context,
            knowledge_context=self.knowledge.build_context() if self._searches_knowledge else None,
            model_system_message=(self.model.get_system_message_for_model(self.get_tools() if tools is None else tools)
                                  if self.model is not None else None),
        )

    def get_tools(self) -> list[Function]:
        """The tools in send order: the user's tools and toolkits as given, then knowledge search."""
        return self._tools(references=[])

    def _tools(self, references: list[dict[str, Any]]) -> list[Function]:
        """The tools, with the knowledge search recording its searches in ``references`` (a run's)."""
        functions = expand_tools(self.tools)
        if self._searches_knowledge:
            if any(f.name == SEARCH_KNOWLEDGE_FUNCTION.name for f in functions):
                raise ValueError(
                    "tools: a tool named 'search_knowledge_base' clashes with the knowledge "
                    "search tool; rename it or set search_knowledge=False"
                )
            functions.append(knowledge_search_function(self.knowledge, references, filters=self.knowledge_filters,
                                                       references_format=self.references_format))
        return functions

    def search_knowledge_references(self, query: str, references: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Search the knowledge base, record the search in ``references``, return the documents."""
        return search_and_record(self.knowledge, query, references, self.knowledge_filters)

    def _initial_messages(self, input: str, references: list[dict[str, Any]], tools: list[Function]) -> list[Message]:
        messages: list[Message] = []
        system = self._system_message(tools)
        if system is not None:
            messages.append(Message(role="system", content=system))
        if self.add_history_to_context:
            messages.extend(self.history_messages())
        text = input
        if self.add_knowledge_to_context:
            docs = self.search_knowledge_references(input, references)
            text = user_message_with_references(input, docs, self.references_format)
        messages.append(Message(role="user", content=text))
        return messages

    def history_messages(self) -> list[Message]:
        """The messages of the session's last ``num_history_runs`` completed runs (user,
        assistant, tool calls and results), oldest first, replayed before a new user message."""
        if self.session_id is None:
            return []
        return self._store.load_history(self.session_id, self.num_history_runs)

    def _require_model(self) -> Model:
        if self.model is None:
            raise ValueError("Agent has no model: pass model=OpenAIResponses(id=...) or another adapter")
        return self.model

    def build_request(self, input: str, stream: bool = False) -> dict[str, Any]:
        """The exact JSON body of the first provider call for ``input``."""
        model = self._require_model()
        tools = self.get_tools()
        messages = self._initial_messages(input, [], tools)
        return model.build_request(messages, tools, stream=stream, output_schema=self.output_schema)

    # ------------------------------------------------------------------ runs
    def _prepare(self, input: str, stream: bool, run_id: str | None) -> PreparedRun:
        if not isinstance(input, str):
            raise TypeError(f"input must be a string, got {type(input).__name__}")
        input = without_surrogates(input, "the run's input")
        model = self._require_model()
        if self.session_id is None:
            self.session_id = str(uuid.uuid4())
        stored = self._store.load_session_state(self.session_id)
        if stored is not None:  # a session continues where it stopped, even in a new process
            self.session_state = {**(self.session_state or {}), **stored}
        if self.session_state is None:
            self.session_state = {}
        run_id = run_id or str(uuid.uuid4())
        output = RunOutput(run_id=run_id, session_id=self.session_id, model=model.id)
        context = RunContext(
            run_id=run_id,
            session_id=self.session_id,
            session_state=self.session_state,
            agent=self,
            references=output.references,
        )
        functions = self._tools(output.references)
        messages = self._initial_messages(input, output.references, functions)
        output.first_own_message = len(messages) - 1
        return PreparedRun(
            model=model,
            messages=messages,
            functions=functions,
            context=context,
            output=output,
            stream=stream,
            tool_call_limit=self.tool_call_limit,
            max_rounds=self.max_rounds,
            output_schema=self.output_schema,
        )

    def _finish(self, output: RunOutput) -> None:
        steps = (self.session_state or {}).get("reasoning_steps", {})
        output.reasoning_steps = list(steps.get(output.run_id, []))
        try:
            self._store.save_run(self.session_id, self.user_id, self.name, output.run_id, output.status,
                                 output.own_messages, self.session_state)
        except RagCoreError as exc:
            exc.output = output  # the run happened: its output is not lost with the storage error
            raise

    def run(self, input: str, stream: bool = False, *, run_id: str | None = None) -> Any:
        """Run the agent. Returns a RunOutput, or with ``stream=True`` an iterator of events
        whose last one, RunCompleted, carries the RunOutput."""
        prepared = self._prepare(input, stream, run_id)
        if stream:
            return self._stream(prepared)
        try:
            for _ in drive(prepared):
                pass
        except Exception:
            self._finish(prepared.output)  # a failed run is stored too, with status "error"
            raise
        self._finish(prepared.output)
        return prepared.output

    def _stream(self, prepared: PreparedRun) -> Iterator[RunEvent]:
        try:
            for event in drive(prepared):
                if isinstance(event, RunCompleted):
                    self._finish(event.output)
                yield event
        except Exception:
            self._finish(prepared.output)
            raise

    async def arun(self, input: str, stream: bool = False, *, run_id: str | None = None) -> Any:
        """Async twin of ``run``: awaits to a RunOutput, or with ``stream=True`` to an async iterator."""
        prepared = self._prepare(input, stream, run_id)
        if stream:
            return self._astream(prepared)
        try:
            async for _ in adrive(prepared):
                pass
        except Exception:
            self._finish(prepared.output)
            raise
        self._finish(prepared.output)
        return prepared.output

    async def _astream(self, prepared: PreparedRun) -> AsyncIterator[RunEvent]:
        try:
            async for event in adrive(prepared):
                if isinstance(event, RunCompleted):
                    self._finish(event.output)
                yield event
        except Exception:
            self._finish(prepared.output)
            raise

    def print_response(
        self,
        input: str,
        stream: bool = False,
        show_full_reasoning: bool = False,
        *,
        file: Any = None,
    ) -> RunOutput:
        """Run and print the exchange for a person to read; returns the RunOutput."""
        from rag_core.agent.printing import print_run

        return print_run(self, input, stream=stream, show_full_reasoning=show_full_reasoning, file=file)
