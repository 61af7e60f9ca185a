-- mistake: plays it safe and never sells
-- fails: all_sold
return 0
