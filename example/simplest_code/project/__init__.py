"""The 'research code' of the simplest example: a noisy bandit learner in numpy."""
