"""The training stage: the trainer (:mod:`.trainer`, ``train()``), the loop both solo and ensemble
training share (:mod:`.loop`), the learning-rate and weight-decay schedule (:mod:`.schedule`), resume
points (:mod:`.resume`), the settings a run holds (:mod:`.guards`), the memory check (:mod:`.budget`),
ensembles (:mod:`.ensemble`) and replays of the authors' draws (:mod:`.replay`)."""
