-- mistake: a loop that never ends (the server answers BUSY to everyone meanwhile)
-- fails: release_removes_own_lock
while true do end
