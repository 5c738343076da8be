#: Instances up to this many block references are certified by CP-SAT and Z3; larger ones by
#: Belady's MIN on the flat sequence (see pyverify.certify.certificate).
SOLVER_LIMIT = 1000
