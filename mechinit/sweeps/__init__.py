"""The sweep stage: a grid over config keys, one run folder per point (:mod:`.grid`), the workers that
train them (:mod:`.workers`) and the phase-diagram report (:mod:`.report`)."""
