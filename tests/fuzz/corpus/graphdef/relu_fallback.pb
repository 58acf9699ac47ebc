
;
xPlaceholder*
dtype0*
shape:ÿÿÿÿÿÿÿÿÿ

rRelux*
T0

eErfr*
T0