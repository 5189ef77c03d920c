"""`JobFacts` from a Harbor job as `hbench.jobs.reader.read_job` reads it: the bridge from
the job format to the registry's placement and scoring (the registry knows no job format)."""

from __future__ import annotations

import hashlib

from hbench.errors import HbenchError
from hbench.jobs.locks import task_digests
from hbench.jobs.models import Job
from registry.placement import JobFacts, TrialFacts
from registry.settings import agent_options, settings_from_config


def facts_from_job(job: Job) -> JobFacts:
    """The facts placement reads. The job has one dataset and one agent, as uploads ensure.

    A prompt template or an extra-instruction file is named by its path in the job's
    config, and its text is not in the job folder: its digest then stands for the path.
    That is enough to tell a job that used one (self-reported jobs may not); an issued
    run's entry takes the digests of the texts the service issued.
    """
    agent = job.config.agents[0]
    trials = [t for t in job.results if t.task_name is not None]
    model = next((t.model for t in trials if t.model is not None), agent.model_name)
    kwargs = agent.kwargs
    template = kwargs.get("prompt_template_path")
    extra = [*job.config.extra_instruction_paths, *job.config.extra_instructions]
    return JobFacts(
        job_id=job.job_id,
        dataset=_dataset(job),
        task_names=sorted({t.task_name for t in trials if t.task_name is not None}),
        model=model,
        n_attempts=job.n_attempts,
        agent=agent.label,
        agent_version=next((t.agent_version for t in trials if t.agent_version), None),
        kwargs=agent_options(agent.model_dump(mode="json")),
        prompt_template_digest=_digest(str(template)) if template else None,
        extra_instruction_digests=[_digest(text) for text in extra],
        environment=job.environment.import_path or job.environment.type or "docker",
        settings=settings_from_config(job.config.model_dump(mode="json")),
        trials=[
            TrialFacts(
                task=t.task_name or "",
                reward=t.reward,
                input_tokens=t.n_input_tokens,
                cached_tokens=t.n_cache_tokens,
                output_tokens=t.n_output_tokens,
                cost_usd=t.cost_usd,
            )
            for t in trials
        ],
        harbor_version=job.harbor_version,
        task_digests=task_digests(job),
    )


def _dataset(job: Job) -> str | None:
    named = [d for d in job.datasets if d.name is not None]
    if not named:
        return None
    dataset = named[0]
    pin = dataset.version or dataset.ref
    if pin is None:
        message = (
            f"the job ran {dataset.name} without a version, and Harbor does not record the "
            f"version it chose; run it again with -d {dataset.name}@<version>"
        )
        raise HbenchError("board-dataset-unpinned", message)
    return f"{dataset.name}@{pin}"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
