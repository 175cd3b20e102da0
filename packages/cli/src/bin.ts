console.log("kubefx")
