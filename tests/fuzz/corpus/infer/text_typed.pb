
m*
sBYTES*Bhi