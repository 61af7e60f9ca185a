-- mistake: never releases (the lock stays until its TTL runs out)
-- fails: release_removes_own_lock
return 0
