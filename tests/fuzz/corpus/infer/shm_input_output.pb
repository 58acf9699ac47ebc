
m*e
xFP32"
shared_memory_offset"
shared_memory_byte_size "
shared_memory_regionr2[
y
shared_memory_offset@
shared_memory_byte_size 
shared_memory_regionr