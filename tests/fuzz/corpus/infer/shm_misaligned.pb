
m*e
xFP32"
shared_memory_regionr"
shared_memory_offset"
shared_memory_byte_size