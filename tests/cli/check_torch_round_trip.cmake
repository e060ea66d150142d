# A model goes out as a PyTorch state dict and comes back: `maskgat export`, `maskgat import` of
# that file into the model's spec, `maskgat export` again. Requires the two torch.save files to be
# identical bytes, and the two models' predictions too.
#   cmake -DMASKGAT=<maskgat> -DMODEL=<checkpoint> -DSPEC=<spec.json> -DCLASSES=<a,b,...>
#         -DOUT=<dir> -DDATA=<args|...> -P check_torch_round_trip.cmake
string(REPLACE "|" ";" DATA "${DATA}")
file(MAKE_DIRECTORY ${OUT}/first ${OUT}/second)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit code ${code}: ${ARGN}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
endfunction()
function(same a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} differ: ${what}")
  endif()
endfunction()
run(${MASKGAT} export --load ${MODEL} --torch ${OUT}/first/model.pt --force --quiet)
run(${MASKGAT} import --torch ${OUT}/first/model.pt --model ${SPEC} --class-names ${CLASSES}
    --out ${OUT}/imported.ckpt --force --quiet)
run(${MASKGAT} export --load ${OUT}/imported.ckpt --torch ${OUT}/second/model.pt --force --quiet)
same(${OUT}/first/model.pt ${OUT}/second/model.pt "the round trip changed the state dict")
run(${MASKGAT} predict --load ${MODEL} ${DATA} --output ${OUT}/trained.csv --force --quiet)
run(${MASKGAT} predict --load ${OUT}/imported.ckpt ${DATA} --output ${OUT}/imported.csv --force
    --quiet)
same(${OUT}/trained.csv ${OUT}/imported.csv "the imported model predicts otherwise")
file(SIZE ${OUT}/first/model.pt size)
message(STATUS "${OUT}: export, import and export again wrote the same ${size} bytes")
