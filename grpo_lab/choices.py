"""The names a run's settings choose from, below every module that reads them: the weights' dtypes and the model
loading backends. ``config`` validates a setting against them, ``policy`` resolves them; neither imports the other
for them, so the settings, the policy and the generation engine import in one direction only (config -> generation
-> policy, config -> policy; nothing back)."""

DTYPES = ("auto", "float32", "bfloat16")  # RunConfig.dtype; grpo_lab.policy.resolve_dtype resolves them
BACKENDS = ("auto", "unsloth", "transformers")  # RunConfig.backend; grpo_lab.policy resolves "auto"
