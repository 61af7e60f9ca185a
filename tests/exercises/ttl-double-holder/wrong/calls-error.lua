-- mistake: raises an error instead of answering
-- fails: release_removes_own_lock
error("not implemented yet")
