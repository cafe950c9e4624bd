"""Run by tests/test_two_process.py, once plainly and once under `accelerate launch --num_processes 2 --cpu`.

Each process writes what it saw per step: the rewards it computed for its own completions,
the gathered rewards the estimator used, and the advantages its optimiser step received; with a
sampling argument (dynamic sampling), also every round's gathered rewards, the groups kept and
the loss normaliser.
"""

import json
import os
import sys
from pathlib import Path

from trl import GRPOConfig

from grpo_lab.policy import load_tiny_lm
from grpo_lab.tasks import arithmetic_problems, correctness_reward, to_dataset
from grpo_lab.trl import trainer_class


def main(out: Path, estimator: str, per_device: int, sampling: str = "none"):
    model, tok = load_tiny_lm()
    local_rewards = []

    def reward(prompts, completions, answer, **kw):
        r = correctness_reward(prompts, completions, answer)
        local_rewards.append(r)
        return r

    Base = trainer_class()

    class Recording(Base):
        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            self.record.append(dict(local_rewards=local_rewards[-1], gathered=self.last_rewards.tolist(),
                                    advantages=output["advantages"].tolist(),
                                    process=self.accelerator.process_index, n=self.accelerator.num_processes))
            if sampling != "none":  # what dynamic sampling chose, and what this process trains on
                s = self.last_sampling
                self.record[-1].update(round_rewards=s["round_rewards"], kept=s["kept_groups"],
                                       padding=s["padding_groups"], drawn=self._stream.drawn,
                                       num_items=int(output["num_items_in_batch"]),
                                       local_tokens=int(output["completion_mask"].sum()),
                                       masked_rows=output["completion_mask"].sum(1).eq(0).tolist())
            return output

    args = GRPOConfig(output_dir=str(out / "trainer"), per_device_train_batch_size=per_device, num_generations=4,
                      max_completion_length=6, max_steps=3, learning_rate=1e-4, logging_steps=1, report_to="none",
                      use_cpu=True, save_strategy="no", seed=0, disable_tqdm=True)
    tr = Recording(model=model, args=args, reward_funcs=reward, train_dataset=to_dataset(arithmetic_problems(64)),
                   processing_class=tok, estimator=estimator, sampling=sampling, max_generation_rounds=3)
    tr.record = []
    tr.train()
    path = out / f"process{tr.accelerator.process_index}.json"
    path.write_text(json.dumps(tr.record))
    if tr.accelerator.is_main_process:
        (out / "log_history.json").write_text(json.dumps(tr.state.log_history))
    tr.accelerator.wait_for_everyone()  # both processes have written their files


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
    # Leave without tearing down: on this CPU machine destroy_process_group() and interpreter exit
    # were seen to hang after a finished run (gloo). Everything has been written and synchronised.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
