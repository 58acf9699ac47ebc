
9
cConst*
dtype0* 
valueB
€€€€€€€€Babc