-- mistake: never releases (the keys on m1 and m2 stay until their TTL runs out)
-- fails: release_removes_own_lock
return 0
