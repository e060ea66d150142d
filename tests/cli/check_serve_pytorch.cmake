# A model trained with the command line goes out as a PyTorch state dict (`maskgat export`), and
# the C++ example serve_pytorch imports that file into the spec and predicts: its test accuracy
# must be the one `maskgat evaluate` reports for the trained model.
#   cmake -DMASKGAT=<maskgat> -DEXAMPLE=<serve_pytorch> -DSPEC=<spec.json> -DOUT=<dir>
#         -P check_serve_pytorch.cmake
file(MAKE_DIRECTORY ${OUT})
function(run output)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit code ${code}: ${ARGN}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  set(${output} "${out}" PARENT_SCOPE)
endfunction()
run(ignored ${MASKGAT} train --dataset cora --model ${SPEC} --epochs 5 --patience 0
    --save ${OUT}/cora.ckpt --force --quiet)
run(ignored ${MASKGAT} export --load ${OUT}/cora.ckpt --torch ${OUT}/cora_gat.pt --force --quiet)
run(evaluated ${MASKGAT} evaluate --load ${OUT}/cora.ckpt --dataset cora --quiet)
run(served ${EXAMPLE} ${OUT}/cora_gat.pt ${SPEC} cora)
if(NOT evaluated MATCHES "test: nodes 1000 loss [0-9.]+ accuracy ([0-9.]+)")
  message(FATAL_ERROR "no test accuracy in maskgat evaluate's output:\n${evaluated}")
endif()
set(expected ${CMAKE_MATCH_1})
if(NOT served MATCHES "^imported 8 tensors: 1433 features -> 7 classes\ntest accuracy ([0-9.]+) \\(([0-9]+) of 1000 nodes\\)\n0: class [0-6]\n1: class [0-6]\n2: class [0-6]\n$")
  message(FATAL_ERROR "serve_pytorch printed:\n${served}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL expected)
  message(FATAL_ERROR "serve_pytorch's test accuracy is ${CMAKE_MATCH_1}, maskgat evaluate's ${expected}")
endif()
message(STATUS "serve_pytorch and maskgat evaluate: test accuracy ${expected}")
