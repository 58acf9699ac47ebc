
m*f
xFP32"
shared_memory_regionr"
shared_memory_offsetú"
shared_memory_byte_size 