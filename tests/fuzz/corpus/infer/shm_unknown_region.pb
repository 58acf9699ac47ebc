
m*f
xFP32"
shared_memory_region
"rshared_memory_ofË~etú"
shared_memory_byte_size 